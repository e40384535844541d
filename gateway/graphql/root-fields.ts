import {
  Kind,
  type DirectiveNode,
  type DocumentNode,
  type FragmentDefinitionNode,
  type OperationDefinitionNode,
  type SelectionNode,
  type SelectionSetNode,
} from 'graphql';

/** An operation as graphql-js executes it: its fragments and the variables it was sent with. */
export interface ResolvedOperation {
  operation: OperationDefinitionNode;
  fragments: Readonly<Record<string, FragmentDefinitionNode | undefined>>;
  variables: Readonly<Record<string, unknown>> | null | undefined;
}

/**
 * The root fields an operation executes, as field names by response key: through inline
 * fragments and fragment spreads, as graphql-js collects them, and without the ones @skip or
 * @include leave out. Counting the operation's direct selections instead saw one selection in
 * `mutation { ... on Mutation { a: … b: … } }`, so the metrics labelled it `invalid` and one
 * failing field set the HTTP status of a response that had several. Two selections with one
 * response key are one field (graphql-js merges them); each fragment is walked once.
 */
export function executedRootFields(resolved: ResolvedOperation): Map<string, string> {
  const fields = new Map<string, string>();
  const walked = new Set<string>();
  const collect = (set: SelectionSetNode): void => {
    for (const selection of set.selections) {
      if (!included(selection, resolved.variables)) continue;
      switch (selection.kind) {
        case Kind.FIELD:
          fields.set(selection.alias?.value ?? selection.name.value, selection.name.value);
          break;
        case Kind.INLINE_FRAGMENT:
          collect(selection.selectionSet);
          break;
        case Kind.FRAGMENT_SPREAD: {
          const fragment = resolved.fragments[selection.name.value];
          if (fragment === undefined || walked.has(fragment.name.value)) break;
          walked.add(fragment.name.value);
          collect(fragment.selectionSet);
          break;
        }
      }
    }
  };
  collect(resolved.operation.selectionSet);
  return fields;
}

/** The document's fragments by name, as graphql-js's execution context holds them. */
export function fragmentsOf(document: DocumentNode): Record<string, FragmentDefinitionNode> {
  const fragments: Record<string, FragmentDefinitionNode> = {};
  for (const definition of document.definitions)
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments[definition.name.value] = definition;
  return fragments;
}

/**
 * Whether @skip and @include let a selection run. A condition this cannot read (a variable
 * missing or not a boolean) counts as running: graphql-js refuses such a request before it
 * executes anything, so no answer depends on the guess.
 */
function included(
  selection: SelectionNode,
  variables: Readonly<Record<string, unknown>> | null | undefined,
): boolean {
  return (
    condition(selection.directives, 'skip', variables) !== true &&
    condition(selection.directives, 'include', variables) !== false
  );
}

function condition(
  directives: readonly DirectiveNode[] | undefined,
  name: 'skip' | 'include',
  variables: Readonly<Record<string, unknown>> | null | undefined,
): boolean | undefined {
  const value = directives
    ?.find((d) => d.name.value === name)
    ?.arguments?.find((a) => a.name.value === 'if')?.value;
  if (value?.kind === Kind.BOOLEAN) return value.value;
  if (value?.kind !== Kind.VARIABLE) return undefined;
  const given = variables?.[value.name.value];
  return typeof given === 'boolean' ? given : undefined;
}
