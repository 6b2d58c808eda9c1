import type { BaseContext } from '@apollo/server';
import type { Logger } from '@linepack/lib/logger';
import type { VerifiedCredential } from './credentials';
import type { RequestDeadline } from './deadline';

export interface GatewayContext extends BaseContext {
  credential: VerifiedCredential;
  requestId: string;
  logger: Logger;
  deadline: RequestDeadline;
}
