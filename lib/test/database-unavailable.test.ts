import { MongoBulkWriteError, MongoNetworkError, MongoServerError, type BulkWriteResult } from 'mongodb';
import { GraphQLError } from 'graphql';
import { isDatabaseUnavailable } from '../errors';

/**
 * Which errors are a database outage (503 DATABASE_UNAVAILABLE, logged at warn without a stack) rather than a bug.
 * The driver's own classes, and the shapes it leaves when a bulk write meets the network: the issue's
 * MongoBulkWriteError stacks from /internal/keys/used during a MongoDB outage were both of these, depending on
 * whether the pool saw the connection close before or after the write (test/ops/logs.test.ts meets them for real).
 */
const bulk = (cause: Error) => new MongoBulkWriteError(cause as never, {} as BulkWriteResult);

it('knows the driver errors of a server it cannot reach, also inside a GraphQL error', () => {
  const network = new MongoNetworkError('connect ECONNREFUSED 127.0.0.1:27017');
  expect(isDatabaseUnavailable(network)).toBe(true);
  expect(isDatabaseUnavailable(new GraphQLError('failed', { originalError: network }))).toBe(true);
});

it('knows a bulk write that met the network: by the labels it carries, or by the socket error code it copied', () => {
  // The pool labels the network error it saw (ResetPool) before the bulk write wraps it, losing its class.
  const network = new MongoNetworkError('connect ECONNREFUSED 127.0.0.1:27017');
  network.addErrorLabel('ResetPool');
  expect(isDatabaseUnavailable(bulk(network))).toBe(true);
  expect(isDatabaseUnavailable(bulk(new Error('connect ECONNREFUSED 127.0.0.1:27017')))).toBe(false);
  // A write on a connection the server had just closed: Node's own EPIPE error, passed on by the driver as it is.
  const epipe = Object.assign(new Error('This socket has been ended by the other party'), { code: 'EPIPE' });
  expect(isDatabaseUnavailable(bulk(epipe))).toBe(true);
  // A connection of a pool another failure had cleared already: the driver labels nothing (a stale error), and the
  // bulk write keeps only the network error's fields (seen in test/infra/crash-durability.test.ts as a 500).
  expect(isDatabaseUnavailable(bulk(new MongoNetworkError('connection 88 to 127.0.0.1:39031 closed')))).toBe(true);
});

it('leaves everything else to be a bug: a duplicate key, a socket error of something that is not the database', () => {
  expect(isDatabaseUnavailable(new MongoServerError({ message: 'E11000 duplicate key', code: 11000 }))).toBe(false);
  expect(isDatabaseUnavailable(bulk(Object.assign(new Error('E11000 duplicate key'), { code: 11000 })))).toBe(false);
  expect(isDatabaseUnavailable(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' }))).toBe(false);
  expect(isDatabaseUnavailable(new TypeError("Cannot read properties of undefined (reading 'x')"))).toBe(false);
});
