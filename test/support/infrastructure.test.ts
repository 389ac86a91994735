import { provideInfrastructure } from './infrastructure';

const noJava = { docker: () => false, java: () => false, kcat: () => true };

test('under CI=true, a machine without Java is refused rather than tested on the kcat mock', async () => {
  await expect(provideInfrastructure({ CI: 'true' }, noJava)).rejects.toThrow(
    'CI=true: the tests run on Apache Kafka, and Java 17+ or Maven is missing; the kcat mock is refused under CI',
  );
});

test('outside CI, a machine with neither Java nor kcat is told what to install', async () => {
  await expect(provideInfrastructure({}, { ...noJava, kcat: () => false })).rejects.toThrow(
    'no Kafka for the tests: install Java 17+ and Maven (Apache Kafka), or kcat (a mock cluster)',
  );
});
