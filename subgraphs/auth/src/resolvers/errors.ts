import { fieldError } from '@linepack/lib/errors';
import { AuthStoreError } from '../store';

/** Store errors become GraphQL errors naming the field; anything else stays an internal error. */
export async function asGraphQLErrors<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    if (err instanceof AuthStoreError) throw fieldError(err.code, err.message, { field: err.field });
    throw err;
  }
}
