import { RemixBrowser } from '@remix-run/react';
import { startTransition, StrictMode } from 'react';
import { hydrateRoot } from 'react-dom/client';

/*
 * A static host serves the page rendered for `/ema` at `/ema/` (or `/ema/index.html`), and
 * Remix reloads a page whose address differs from the one it was rendered for: forever.
 * Give the address the rendered form first; it names the same page.
 */
function matchRenderedUrl() {
  const rendered: string | undefined = (window as any).__remixContext?.url;
  const here = window.location.pathname;
  if (!rendered || here === rendered) return;
  const bare = (path: string) => path.replace(/\/(index\.html)?$/, '') || '/';
  if (bare(here) !== bare(rendered)) return;
  window.history.replaceState(
    window.history.state,
    '',
    rendered + window.location.search + window.location.hash,
  );
}

function hydrate() {
  matchRenderedUrl();
  startTransition(() => {
    hydrateRoot(
      document,
      <StrictMode>
        <RemixBrowser />
      </StrictMode>,
    );
  });
}

if (window.requestIdleCallback) {
  window.requestIdleCallback(hydrate);
} else {
  // Safari doesn't support requestIdleCallback
  // https://caniuse.com/requestidlecallback
  window.setTimeout(hydrate, 1);
}
