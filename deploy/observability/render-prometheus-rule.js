// Writes deploy/k8s/components/monitoring/prometheus-rule.yaml from alerts.yml, so Kubernetes runs the
// same rules as compose: the PrometheusRule's `spec` is alerts.yml from `groups:` on, indented by two
// spaces, comments and all. Run it after changing the rules:
//   node deploy/observability/render-prometheus-rule.js
// test/deploy/kubernetes.test.ts fails when the committed file is not what this renders.
'use strict';
const { readFileSync, writeFileSync } = require('node:fs');
const path = require('node:path');

const repoRoot = path.resolve(__dirname, '..', '..');
const rulesFile = path.join(repoRoot, 'deploy', 'observability', 'alerts.yml');
const outputFile = path.join(repoRoot, 'deploy', 'k8s', 'components', 'monitoring', 'prometheus-rule.yaml');

const header = `# Generated from deploy/observability/alerts.yml by deploy/observability/render-prometheus-rule.js;
# edit the rules there and run the script again.
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: fleet-telemetry
  labels:
    app.kubernetes.io/part-of: fleet-telemetry
spec:
`;

function render() {
  const rules = readFileSync(rulesFile, 'utf8');
  const start = rules.search(/^groups:/m);
  if (start < 0) throw new Error(`${rulesFile} has no top-level groups:`);
  return header + rules.slice(start).replace(/^(?=.)/gm, '  ');
}

if (require.main === module) writeFileSync(outputFile, render());

module.exports = { render, outputFile };
