import { GATEWAY_ERRORS } from '../gateway.errors.ts';
import {
  getNamedType,
  GraphQLError,
  isInterfaceType,
  isObjectType,
  Kind,
  OperationTypeNode,
  type ASTVisitor,
  type FieldNode,
  type GraphQLField,
  type GraphQLNamedType,
  type SelectionNode,
  type SelectionSetNode,
  type ValidationContext,
} from 'graphql';
import { WEBHOOK_DELIVERIES_MAX_PAGE_SIZE } from '../../services/notifications/contract.ts';
import { PAYMENTS_MAX_PAGE_SIZE } from '../../services/payments/contract.ts';

/** Documents deeper than this are refused before anything executes (docs/api.md §1.4). */
export const MAX_QUERY_DEPTH = 12;
/** More aliases than this in one operation are refused: aliases multiply work per request. */
export const MAX_ALIASES = 15;
/** More root mutation fields than this are refused: each one is a command with its own key. */
export const MAX_ROOT_MUTATION_FIELDS = 10;
/**
 * Rows one operation may ask for, in the query-cost model of GitHub and Shopify: each paginated
 * field costs its page size times the pages above it, and aliases multiply it as they repeat
 * it. Five full pages: a screen that shows a few lists at once fits; fifteen aliased pages of a
 * hundred in one request, which slowed every other tenant's reads, do not.
 */
export const MAX_DOCUMENT_COST = 500;
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
 * What an operation will run, as the limits count it: levels of fields, fields at its own level
 * (at an operation's root, its root fields), aliases, and cost. Each is counted through inline
 * fragments and fragment spreads alike, so wrapping fields in `... on Mutation { }` or a named
 * fragment hides none of them; a fragment spread twice counts twice.
 */
interface Measure {
  depth: number;
  fields: number;
  aliases: number;
  cost: number;
}

const NOTHING: Measure = { depth: 0, fields: 0, aliases: 0, cost: 0 };

/** The arguments that set a connection's page size (Relay's, as GitHub and Shopify count them). */
const PAGE_SIZE_ARGUMENTS = new Set(['first', 'last']);

/**
 * The largest page each paginated field serves, by schema coordinate: the service refuses a
 * larger one, so a page can cost no more. A paginated field missing here would be counted at
 * the largest of them; test/unit/document-limits.test.ts fails when the schema has one.
 */
export const MAX_PAGE_SIZE_BY_FIELD: Readonly<Record<string, number>> = {
  'Query.payments': PAYMENTS_MAX_PAGE_SIZE,
  'Query.webhookDeliveries': WEBHOOK_DELIVERIES_MAX_PAGE_SIZE,
};
const LARGEST_PAGE_SIZE = Math.max(...Object.values(MAX_PAGE_SIZE_BY_FIELD));

/**
 * Rows a paginated field may return, or null when it takes no page size: the larger of its
 * page-size arguments, within the field's largest page. A literal counts as written. A variable
 * counts as the largest page: validation runs before variables are known, and a document is
 * judged once for every value it may be sent with. An absent argument counts as its schema
 * default; with neither given nor defaulted, the server picks, so the largest page.
 */
function pageSize(
  node: FieldNode,
  parent: GraphQLNamedType,
  field: GraphQLField<unknown, unknown>,
): number | null {
  const largest = MAX_PAGE_SIZE_BY_FIELD[`${parent.name}.${field.name}`] ?? LARGEST_PAGE_SIZE;
  const sizes = field.args
    .filter((argument) => PAGE_SIZE_ARGUMENTS.has(argument.name))
    .map((argument) => {
      const given = node.arguments?.find((a) => a.name.value === argument.name)?.value;
      if (given === undefined)
        return typeof argument.defaultValue === 'number' ? argument.defaultValue : null;
      if (given.kind === Kind.INT) return Number(given.value);
      return given.kind === Kind.NULL ? 0 : largest;
    });
  if (sizes.length === 0) return null;
  const known = sizes.filter((size) => size !== null);
  if (known.length === 0) return largest;
  return Math.min(Math.max(0, ...known), largest);
}

/**
 * Measures each operation, following fragment spreads. Each fragment is measured once per
 * document and reused: walking a fragment again at every spread costs fanout^levels steps, and
 * a few hundred bytes of fragments that each spread the next ten times would stall the event
 * loop for every tenant. A fragment's measure does not depend on where it is spread (its type
 * condition fixes its fields, and a cost is per row of whatever holds it), so with the memo the
 * walk visits each selection once and stays linear in the document. A fragment met again while
 * it is being measured is a cycle, which NoFragmentCyclesRule refuses; it measures nothing here
 * so the walk terminates.
 */
class DocumentMeter {
  private readonly fragments = new Map<string, Measure>();
  private readonly inProgress = new Set<string>();

  constructor(private readonly context: ValidationContext) {}

  of(set: SelectionSetNode, parent: GraphQLNamedType | undefined): Measure {
    const total = { ...NOTHING };
    for (const selection of set.selections) {
      const part = this.ofSelection(selection, parent);
      total.depth = Math.max(total.depth, part.depth);
      total.fields += part.fields;
      total.aliases += part.aliases;
      total.cost += part.cost;
    }
    return total;
  }

  private ofSelection(selection: SelectionNode, parent: GraphQLNamedType | undefined): Measure {
    switch (selection.kind) {
      case Kind.FIELD:
        return this.ofField(selection, parent);
      case Kind.INLINE_FRAGMENT:
        return this.of(
          selection.selectionSet,
          selection.typeCondition
            ? this.context.getSchema().getType(selection.typeCondition.name.value)
            : parent,
        );
      case Kind.FRAGMENT_SPREAD:
        return this.ofFragment(selection.name.value);
    }
  }

  /**
   * A field is one field and one level; a paginated field costs its rows, and everything below
   * it costs once per row (a connection inside a page of 100 costs 100 times its own page).
   */
  private ofField(node: FieldNode, parent: GraphQLNamedType | undefined): Measure {
    const field =
      isObjectType(parent) || isInterfaceType(parent)
        ? parent.getFields()[node.name.value]
        : undefined;
    const rows = parent !== undefined && field !== undefined ? pageSize(node, parent, field) : null;
    const inner = node.selectionSet
      ? this.of(node.selectionSet, field && getNamedType(field.type))
      : NOTHING;
    return {
      depth: 1 + inner.depth,
      fields: 1,
      aliases: (node.alias ? 1 : 0) + inner.aliases,
      cost: rows === null ? inner.cost : rows + rows * inner.cost,
    };
  }

  private ofFragment(name: string): Measure {
    const known = this.fragments.get(name);
    if (known !== undefined) return known;
    const fragment = this.context.getFragment(name);
    if (fragment === undefined || fragment === null || this.inProgress.has(name)) return NOTHING;
    this.inProgress.add(name);
    const measure = this.of(
      fragment.selectionSet,
      this.context.getSchema().getType(fragment.typeCondition.name.value) ?? undefined,
    );
    this.inProgress.delete(name);
    this.fragments.set(name, measure);
    return measure;
  }
}

/** Refuses an operation over any limit, before anything executes, naming each limit it passes. */
export function documentLimitRule(context: ValidationContext): ASTVisitor {
  const meter = new DocumentMeter(context);
  return {
    OperationDefinition(node) {
      const root = context.getSchema().getRootType(node.operation) ?? undefined;
      const measure = meter.of(node.selectionSet, root);
      if (measure.depth > MAX_QUERY_DEPTH)
        refuse(context, `the document is deeper than ${MAX_QUERY_DEPTH} levels`);
      if (measure.aliases > MAX_ALIASES)
        refuse(context, `the document has more than ${MAX_ALIASES} aliases`);
      if (
        node.operation === OperationTypeNode.MUTATION &&
        measure.fields > MAX_ROOT_MUTATION_FIELDS
      )
        refuse(context, `a mutation may have at most ${MAX_ROOT_MUTATION_FIELDS} root fields`);
      if (measure.cost > MAX_DOCUMENT_COST)
        refuse(
          context,
          `the document costs ${measure.cost}, over the limit of ${MAX_DOCUMENT_COST}: each ` +
            'paginated field costs its page size (a variable counts as the largest page) times ' +
            'the pages above it; ask for smaller or fewer pages',
        );
    },
  };
}

export const documentLimitRules = [documentLimitRule];
