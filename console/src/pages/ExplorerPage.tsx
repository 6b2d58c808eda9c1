import { GraphiQL } from 'graphiql';
import 'graphiql/style.css';
import './ExplorerPage.css';
import { useEffect, useMemo, useRef, useState, type ComponentProps, type RefObject } from 'react';
import { PublicLayout } from '../components/Layout';
import { Status } from '../components/Notice';
import { exampleOperations } from '../examples';
import { useTitle } from '../hooks';
import { Link, useRouter } from '../router';
import { explorerFetch, useSession } from '../session';

type Fetcher = ComponentProps<typeof GraphiQL>['fetcher'];

/** Headers typed into GraphiQL's header editor, as an object of strings. */
function headersOf(value: unknown): Record<string, string> {
  if (!value || typeof value !== 'object') return {};
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) if (typeof v === 'string') out[k] = v;
  return out;
}

/**
 * GraphiQL keeps its tabs, queries and history here instead of localStorage: nothing an operator typed (or a key in
 * the headers editor) outlives the page, and each visit starts from the README's examples instead of piling up tabs.
 */
function memoryStorage(): ComponentProps<typeof GraphiQL>['storage'] {
  const items = new Map<string, string>();
  return {
    getItem: (key: string) => items.get(key) ?? null,
    setItem: (key: string, value: string) => void items.set(key, value),
    removeItem: (key: string) => void items.delete(key),
    clear: () => items.clear(),
    get length() {
      return items.size;
    },
  };
}

/** What each of GraphiQL's CodeMirror editors is, by its CodeMirror mode, as assistive technology announces it. */
const editorLabels: Record<string, string> = {
  graphql: 'Operation (GraphQL)',
  'graphql-variables': 'Variables (JSON)',
  javascript: 'Request headers (JSON)',
  'graphql-results': 'Response',
};

/** The part of CodeMirror 5's API used here (the instance is the `CodeMirror` property of its wrapper element). */
interface CodeMirrorEditor {
  getOption(name: 'mode'): string | { name?: string } | null;
  getOption(name: 'screenReaderLabel'): string | null;
  setOption(name: 'screenReaderLabel', value: string): void;
}

/** Names each CodeMirror editor through CodeMirror's own `screenReaderLabel` option (an aria-label on its input). */
function labelEditors(root: HTMLElement): void {
  for (const wrapper of root.querySelectorAll<HTMLElement & { CodeMirror?: CodeMirrorEditor }>('.CodeMirror')) {
    const editor = wrapper.CodeMirror;
    if (!editor) continue;
    const mode = editor.getOption('mode');
    const text = editorLabels[(typeof mode === 'string' ? mode : mode?.name) ?? ''];
    if (text && editor.getOption('screenReaderLabel') !== text) editor.setOption('screenReaderLabel', text);
  }
}

/** A history entry's button is named "Set active" over the operation's name it shows: its name now starts with that name. */
function nameHistoryEntries(root: HTMLElement): void {
  for (const button of root.querySelectorAll<HTMLButtonElement>('button.graphiql-history-item-label')) {
    const name = `${button.textContent?.trim() ?? ''} (set active)`;
    if (button.getAttribute('aria-label') !== name) button.setAttribute('aria-label', name);
  }
}

/**
 * What GraphiQL leaves unnamed, named, as it renders (its editors appear after the page does, CodeMirror being loaded
 * on demand; history entries come and go): its editors' input fields had no name at all (axe-core: "Form elements must
 * have labels", critical), and a history entry's accessible name left out the text it shows (WCAG 2.5.3).
 */
function useAccessibleGraphiql(frame: RefObject<HTMLDivElement | null>, active: boolean) {
  useEffect(() => {
    const root = frame.current;
    if (!active || !root) return;
    const name = () => {
      labelEditors(root);
      nameHistoryEntries(root);
    };
    name();
    const observer = new MutationObserver(name);
    observer.observe(root, { childList: true, subtree: true });
    return () => observer.disconnect();
  }, [frame, active]);
}

function Explorer() {
  const storage = useMemo(memoryStorage, []);
  const { status } = useSession();
  const { path } = useRouter();
  const [typedKey, setTypedKey] = useState('');
  const [apiKey, setApiKey] = useState<string | null>(null);

  // Apply a pasted key once typing pauses, so the schema is not fetched on every keystroke.
  useEffect(() => {
    const trimmed = typedKey.trim();
    const timer = setTimeout(() => setApiKey(trimmed ? trimmed : null), 400);
    return () => clearTimeout(timer);
  }, [typedKey]);

  // A request always goes with the key as the field shows it now, even when Run follows the paste within the pause.
  const typedKeyNow = useRef(typedKey);
  typedKeyNow.current = typedKey;
  const fetcher = useMemo<Fetcher>(
    () => (params, options) => explorerFetch(params, headersOf(options?.headers), typedKeyNow.current.trim() || null) as ReturnType<Fetcher>,
    [apiKey],
  );
  const signedIn = status === 'signedIn';
  const usable = apiKey !== null || signedIn;
  const frame = useRef<HTMLDivElement>(null);
  useAccessibleGraphiql(frame, usable);

  return (
    <div className="explorer">
      <div className="explorer-head">
        <h1>Explorer</h1>
        <div className="field field-inline explorer-key">
          <label htmlFor="explorer-api-key">API key (optional)</label>
          <input
            id="explorer-api-key"
            type="text"
            autoComplete="off"
            spellCheck={false}
            placeholder="lpk_…"
            value={typedKey}
            onChange={(e) => setTypedKey(e.target.value)}
            aria-describedby="explorer-credential"
          />
        </div>
        <p id="explorer-credential" className="hint">
          {apiKey
            ? 'Requests use the pasted API key (kept in this page only, never saved).'
            : signedIn
              ? 'Requests use your session in the tenant picked above. Paste an API key to use it instead.'
              : 'Paste an API key, or sign in, to send requests.'}
        </p>
      </div>
      {usable ? (
        <div className="explorer-frame" ref={frame}>
          <GraphiQL
            fetcher={fetcher}
            defaultTabs={exampleOperations}
            defaultEditorToolsVisibility={false}
            shouldPersistHeaders={false}
            storage={storage}
            isHeadersEditorEnabled
            forcedTheme="light"
          >
            <GraphiQL.Logo>Linepack</GraphiQL.Logo>
          </GraphiQL>
        </div>
      ) : (
        <Status>
          <Link to={`/sign-in?next=${encodeURIComponent(path)}`}>Sign in</Link> to use the explorer with your account, or paste an API key above.
        </Status>
      )}
    </div>
  );
}

/** The GraphQL explorer (GraphiQL, bundled): at /explorer, and at /graphql when a browser opens it. */
export function ExplorerPage({ standalone = false }: { standalone?: boolean }) {
  useTitle('Explorer');
  if (standalone) {
    return (
      <PublicLayout wide>
        <Explorer />
      </PublicLayout>
    );
  }
  return <Explorer />;
}
