import { GATEWAY_ERRORS } from '../gateway.errors.ts';
import {
  GraphQLError,
  Kind,
  OperationTypeNode,
  type ASTVisitor,
  type SelectionSetNode,
  type ValidationContext,
} from 'graphql';

/** Documents deeper than this are refused before anything executes (docs/api.md §1.4). */
export const MAX_QUERY_DEPTH = 12;
/** More aliases than this in one document are refused: aliases multiply work per request. */
export const MAX_ALIASES = 15;
/** More root mutation fields than this are refused: each one is a command with its own key. */
export const MAX_ROOT_MUTATION_FIELDS = 10;
/**
 * The parser stops after this many tokens, before building an AST that validation would walk.
 * Every later step is linear in the tokens, so this bounds them all. It also bounds nesting,
 * which costs at least one token a level: graphql-js parses literals and selection sets by
 * recursion, and a document nested a few thousand levels deep overflows the stack inside the
 * parser, where the token count alone would be checked too late. Ten mutations with full
 * selections fit well within it (graphql-armor's default). A tool's full introspection query
 * fits the tokens but not the depth limit (its nested type references): tools read the schema
 * from schema/payments.graphql, which the explorer compiles in.
 */
export const MAX_DOCUMENT_TOKENS = 1_000;

function refuse(context: ValidationContext, message: string): void {
  context.reportError(
    new GraphQLError(message, {
      extensions: { code: GATEWAY_ERRORS.GRAPHQL_VALIDATION_FAILED.code },
    }),
  );
}

/**
 * Depth of each operation, following fragment spreads. Each fragment's depth is computed once per
 * document and reused: walking a fragment again at every spread costs fanout^levels steps, and a
 * few hundred bytes of fragments that each spread the next ten times would stall the event loop
 * for every tenant. With the memo the walk visits each selection once, so it is linear in the
 * document. A fragment met again while its own depth is being computed is a cycle, which
 * NoFragmentCyclesRule refuses; it counts as depth 0 here so the walk terminates.
 */
class DepthMeter {
  private readonly fragmentDepths = new Map<string, number>();
  private readonly inProgress = new Set<string>();

  constructor(private readonly context: ValidationContext) {}

  of(set: SelectionSetNode): number {
    let deepest = 0;
    for (const selection of set.selections) {
      switch (selection.kind) {
        case Kind.FIELD:
          deepest = Math.max(
            deepest,
            selection.selectionSet ? 1 + this.of(selection.selectionSet) : 1,
          );
          break;
        case Kind.INLINE_FRAGMENT:
          deepest = Math.max(deepest, this.of(selection.selectionSet));
          break;
        case Kind.FRAGMENT_SPREAD:
          deepest = Math.max(deepest, this.ofFragment(selection.name.value));
          break;
      }
    }
    return deepest;
  }

  private ofFragment(name: string): number {
    const known = this.fragmentDepths.get(name);
    if (known !== undefined) return known;
    const fragment = this.context.getFragment(name);
    if (fragment === undefined || fragment === null || this.inProgress.has(name)) return 0;
    this.inProgress.add(name);
    const depth = this.of(fragment.selectionSet);
    this.inProgress.delete(name);
    this.fragmentDepths.set(name, depth);
    return depth;
  }
}

export function depthLimitRule(context: ValidationContext): ASTVisitor {
  const meter = new DepthMeter(context);
  return {
    OperationDefinition(node) {
      if (meter.of(node.selectionSet) > MAX_QUERY_DEPTH) {
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
