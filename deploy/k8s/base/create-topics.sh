#!/bin/sh
# Creates the application's Kafka topics with the apache/kafka image's tools. The docker-compose `init`
# service and the Kubernetes `fleet-create-topics` Job both run this file, so the table below is the one
# place where partition counts are decided.
#
# Partitions are the unit of writer parallelism: within a consumer group each partition is consumed by
# one writer instance at a time, so the partition count of <prefix>.trip-locations is the most
# trip-writer replicas that do useful work (extra replicas sit idle). Kafka can add partitions but never
# remove them, and adding some moves keys to other partitions, so start with room to grow.
#
# Safe to run again: existing topics are kept, a topic with fewer partitions than the table is grown,
# and retention is set to the table's value.
set -eu

: "${KAFKA_BROKERS:?must list the bootstrap brokers as host:port[,host:port]}"
prefix="${KAFKA_TOPIC_PREFIX:-fleet}"
replication="${TOPIC_REPLICATION_FACTOR:-1}"
kafka_bin="${KAFKA_BIN:-/opt/kafka/bin}"

# With three replicas a write survives one broker being down while still reaching two of them.
if [ "$replication" -ge 3 ]; then min_insync=2; else min_insync=1; fi

describe_partitions() {
  "$kafka_bin/kafka-topics.sh" --bootstrap-server "$KAFKA_BROKERS" --describe --topic "$1" </dev/null \
    | sed -n 's/.*PartitionCount:[[:space:]]*\([0-9][0-9]*\).*/\1/p' | head -n 1
}

while read -r name partitions retention_ms _why; do
  case "$name" in '' | '#'*) continue ;; esac
  topic="$prefix.$name"
  "$kafka_bin/kafka-topics.sh" --bootstrap-server "$KAFKA_BROKERS" --create --if-not-exists \
    --topic "$topic" --partitions "$partitions" --replication-factor "$replication" \
    --config "retention.ms=$retention_ms" --config "min.insync.replicas=$min_insync" </dev/null
  current=$(describe_partitions "$topic")
  if [ -z "$current" ]; then
    echo "cannot read the partition count of $topic" >&2
    exit 1
  fi
  if [ "$current" -lt "$partitions" ]; then
    "$kafka_bin/kafka-topics.sh" --bootstrap-server "$KAFKA_BROKERS" --alter \
      --topic "$topic" --partitions "$partitions" </dev/null
  fi
  "$kafka_bin/kafka-configs.sh" --bootstrap-server "$KAFKA_BROKERS" --alter \
    --entity-type topics --entity-name "$topic" --add-config "retention.ms=$retention_ms" </dev/null
  echo "topic $topic ready: $(describe_partitions "$topic") partitions, replication factor $replication"
done <<'TOPICS'
# name          partitions  retention.ms  why
trip-locations  12          604800000     the write path's volume; 12 = most trip-writers that do work
vehicle-groups  3           604800000     low volume; 3 keeps one group-writer per partition possible
replies         6           3600000       a reply is useless after the gateway's REPLY_TIMEOUT_MS
dead-letter     3           1209600000    kept two weeks for operators to inspect and replay
TOPICS
