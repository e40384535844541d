import { useState, type FormEvent } from 'react';

/**
 * The API key field. A key is used when submitted, not on every keystroke: each change of key
 * gives GraphiQL a new fetcher, and half a key is only a failed authentication.
 */
export function ApiKeyForm(props: { inUse: string; onUse(apiKey: string): void }) {
  const [draft, setDraft] = useState(props.inUse);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    props.onUse(draft.trim());
  };
  const forget = () => {
    setDraft('');
    props.onUse('');
  };
  return (
    <form className="explorer-key" onSubmit={submit}>
      <label htmlFor="explorer-api-key">API key</label>
      <input
        id="explorer-api-key"
        type="password"
        autoComplete="off"
        spellCheck={false}
        placeholder="sk_… (npm start prints the demo tenant's, or see .data/demo-api-key)"
        value={draft}
        onChange={(event) => setDraft(event.target.value)}
      />
      <button type="submit">Use key</button>
      <button type="button" onClick={forget} disabled={props.inUse === '' && draft === ''}>
        Forget
      </button>
      <span role="status" className="explorer-key-status">
        {props.inUse === ''
          ? 'No key in use: requests are not sent.'
          : 'Key in use for this tab; sent as Authorization: Bearer.'}
      </span>
    </form>
  );
}
