/**
 * A GraphQL document as the SDK sends it: its text, its one operation's name, and whether it is
 * a mutation (retried on every answer that is not final) or a query (retried only when the
 * answer was lost or the gateway could not serve it).
 */
import {
  Kind,
  OperationTypeNode,
  parse,
  print,
  type DocumentNode,
  type OperationDefinitionNode,
} from 'graphql';
import { invalidRequest } from './payments-api-error.ts';
import type { CallKind } from './retry-policy.ts';

export interface PreparedDocument {
  query: string;
  kind: CallKind;
  operationName: string | undefined;
}

/** Prepares documents, printing each DocumentNode once for the life of its client. */
export function createDocumentPreparer(): (document: DocumentNode | string) => PreparedDocument {
  const printed = new WeakMap<DocumentNode, PreparedDocument>();
  return (document) => {
    if (typeof document === 'string') return prepare(parsed(document), document);
    let prepared = printed.get(document);
    if (prepared === undefined) {
      prepared = prepare(document, print(document));
      printed.set(document, prepared);
    }
    return prepared;
  };
}

function parsed(text: string): DocumentNode {
  try {
    return parse(text);
  } catch (cause) {
    throw invalidRequest(`the document does not parse: ${String(cause)}`, cause);
  }
}

function prepare(document: DocumentNode, query: string): PreparedDocument {
  const operations = document.definitions.filter(
    (definition): definition is OperationDefinitionNode =>
      definition.kind === Kind.OPERATION_DEFINITION,
  );
  const [operation] = operations;
  // Several operations would need an operationName to choose one, and each its own policy.
  if (operation === undefined || operations.length > 1) {
    throw invalidRequest('a document must hold exactly one operation');
  }
  if (operation.operation === OperationTypeNode.SUBSCRIPTION) {
    throw invalidRequest('subscriptions are not served over this transport');
  }
  return {
    query,
    kind: operation.operation === OperationTypeNode.MUTATION ? 'mutation' : 'read',
    operationName: operation.name?.value,
  };
}
