import type { Db } from 'mongodb';
import { eventStream } from '@linepack/lib/events/outbox';
import { threadRelay, type ThreadRelay } from '@linepack/lib/events/relay-thread';
import { measurementEventData, type MeasurementDocument } from './documents';
import { ILI_COLLECTIONS, type IliRunDocument } from './ili/documents';
import { MEASUREMENTS_COLLECTION } from './repository';

/**
 * What the measurements subgraph publishes, both on its measurements stream: measurements, and runs (analytics
 * compares a segment's runs from ili.run.* events). Relayed on a thread of their own (threads.ts, relay-thread.ts).
 */
export function measurementRelays(db: Db, dbPrefix: string): [ThreadRelay, ThreadRelay] {
  const stream = eventStream(dbPrefix, 'measurements');
  return [
    threadRelay(db.collection<MeasurementDocument>(MEASUREMENTS_COLLECTION), stream, measurementEventData),
    threadRelay(db.collection<IliRunDocument>(ILI_COLLECTIONS.runs), stream, (_run, entry) => entry.data ?? {}),
  ];
}
