/**
 * SDL errors as an editor wants them: `file:line:column: message`, one line, no stack. graphql-js knows the
 * position when the text is parsed as a named Source; these helpers keep that name to the message.
 */
import path from 'node:path';
import { GraphQLError, Source, parse, type DocumentNode } from 'graphql';

/** An error in an SDL file whose message already says where; printed as it is. */
export class SdlError extends Error {}

/** `file` as the reader typed it: relative to the working directory when inside it. */
export function displayPath(file: string): string {
  const relative = path.relative(process.cwd(), file);
  return relative && !relative.startsWith('..') && !path.isAbsolute(relative) ? relative : file;
}

/** Where a GraphQL error points, `file:line:column: message`, or its bare message when it has no position. */
export function locatedMessage(error: GraphQLError): string {
  const node = error.nodes?.find((n) => n.loc);
  const source = error.source ?? node?.loc?.source;
  const location = error.locations?.[0] ?? (node?.loc ? { line: node.loc.startToken.line, column: node.loc.startToken.column } : undefined);
  return source && location ? `${source.name}:${location.line}:${location.column}: ${error.message}` : error.message;
}

/** Parses SDL read from `file`; a syntax error becomes an SdlError naming file:line:column. */
export function parseSdl(text: string, file: string): DocumentNode {
  try {
    return parse(new Source(text, displayPath(file)));
  } catch (err) {
    if (err instanceof GraphQLError) throw new SdlError(locatedMessage(err));
    throw err;
  }
}
