import {
  GraphQLError,
  Kind,
  OperationTypeNode,
  type ASTVisitor,
  type SelectionSetNode,
  type ValidationContext,
} from 'graphql';

/** Documents deeper than this are refused before anything executes (CONTRACT §1). */
export const MAX_QUERY_DEPTH = 12;
/** More aliases than this in one document are refused: aliases multiply work per request. */
export const MAX_ALIASES = 15;
/** More root mutation fields than this are refused: each one is a command with its own key. */
export const MAX_ROOT_MUTATION_FIELDS = 10;

function refuse(context: ValidationContext, message: string): void {
  context.reportError(
    new GraphQLError(message, { extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }),
  );
}

/** Depth of a selection set, following fragment spreads (each fragment at most once per path). */
function depthOf(
  context: ValidationContext,
  set: SelectionSetNode,
  seen: ReadonlySet<string>,
): number {
  let deepest = 0;
  for (const selection of set.selections) {
    if (selection.kind === Kind.FIELD) {
      deepest = Math.max(
        deepest,
        selection.selectionSet ? 1 + depthOf(context, selection.selectionSet, seen) : 1,
      );
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      deepest = Math.max(deepest, depthOf(context, selection.selectionSet, seen));
    } else if (!seen.has(selection.name.value)) {
      const fragment = context.getFragment(selection.name.value);
      if (fragment)
        deepest = Math.max(
          deepest,
          depthOf(context, fragment.selectionSet, new Set([...seen, selection.name.value])),
        );
    }
  }
  return deepest;
}

export function depthLimitRule(context: ValidationContext): ASTVisitor {
  return {
    OperationDefinition(node) {
      if (depthOf(context, node.selectionSet, new Set()) > MAX_QUERY_DEPTH) {
        refuse(context, `the document is deeper than ${MAX_QUERY_DEPTH} levels`);
      }
    },
  };
}

export function aliasLimitRule(context: ValidationContext): ASTVisitor {
  let aliases = 0;
  return {
    Field(node) {
      if (node.alias) aliases += 1;
    },
    Document: {
      leave() {
        if (aliases > MAX_ALIASES)
          refuse(context, `the document has more than ${MAX_ALIASES} aliases`);
      },
    },
  };
}

export function rootMutationFieldLimitRule(context: ValidationContext): ASTVisitor {
  return {
    OperationDefinition(node) {
      if (node.operation !== OperationTypeNode.MUTATION) return;
      const rootFields = node.selectionSet.selections.filter((s) => s.kind === Kind.FIELD).length;
      if (rootFields > MAX_ROOT_MUTATION_FIELDS) {
        refuse(context, `a mutation may have at most ${MAX_ROOT_MUTATION_FIELDS} root fields`);
      }
    },
  };
}

export const documentLimitRules = [depthLimitRule, aliasLimitRule, rootMutationFieldLimitRule];
