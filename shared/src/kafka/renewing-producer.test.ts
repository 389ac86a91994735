import { KafkaJSNumberOfRetriesExceeded, KafkaJSProtocolError, KafkaJSRequestTimeoutError } from 'kafkajs';
import { lostSequence, unknownOutcome } from './renewing-producer';

/** An answer of the broker for one partition, as kafkajs raises it. */
const answered = (type: string, code: number) => new KafkaJSProtocolError({ type, code, message: type, retriable: true } as never);
/** What kafkajs throws once its retries of a produce have run out on `last`. */
const gaveUpOn = (last: Error) => new KafkaJSNumberOfRetriesExceeded(last, { retryCount: 10, retryTime: 500 });

describe('what a failed produce says of the sequence numbers', () => {
  test('the broker refusing a sequence, directly or after the retries, is a lost sequence', () => {
    expect(lostSequence(answered('OUT_OF_ORDER_SEQUENCE_NUMBER', 45))).toBe(true);
    expect(lostSequence(gaveUpOn(answered('OUT_OF_ORDER_SEQUENCE_NUMBER', 45)))).toBe(true);
    expect(lostSequence(gaveUpOn(answered('REQUEST_TIMED_OUT', 7)))).toBe(false);
  });

  test("the replicas not confirming in time, or no answer at all, leaves the produce's outcome unknown", () => {
    expect(unknownOutcome(gaveUpOn(answered('REQUEST_TIMED_OUT', 7)))).toBe(true);
    expect(unknownOutcome(gaveUpOn(new KafkaJSRequestTimeoutError('Request Produce(key: 0, version: 7) timed out')))).toBe(true);
  });

  test('a produce the broker refused before writing it leaves no doubt', () => {
    expect(unknownOutcome(gaveUpOn(answered('NOT_ENOUGH_REPLICAS', 19)))).toBe(false);
    expect(unknownOutcome(answered('MESSAGE_TOO_LARGE', 10))).toBe(false);
    expect(unknownOutcome(new Error('Broker not connected'))).toBe(false);
  });
});
