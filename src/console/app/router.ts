import { useEffect, useState } from 'preact/hooks';

/** The console's own paths, all under /ui: history-API navigation, no reload, no hash. */
export function navigate(href: string): void {
  history.pushState(null, '', href);
  dispatchEvent(new PopStateEvent('popstate'));
}

export function useLocation(): URL {
  const [url, setUrl] = useState(() => new URL(location.href));
  useEffect(() => {
    const update = () => setUrl(new URL(location.href));
    addEventListener('popstate', update);
    return () => removeEventListener('popstate', update);
  }, []);
  return url;
}

/**
 * Same-origin /ui links navigate in place (the session token lives in this tab); modified clicks (new
 * tab) keep the browser's behaviour, and so does a link to a heading of the page shown.
 */
export function interceptLinks(event: MouseEvent): void {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey)
    return;
  const anchor = (event.target as Element | null)?.closest?.('a');
  if (!anchor || anchor.target === '_blank' || anchor.hasAttribute('download')) return;
  const url = new URL(anchor.href, location.href);
  if (url.origin !== location.origin || !url.pathname.startsWith('/ui')) return;
  if (url.hash && url.pathname === location.pathname && url.search === location.search) return;
  event.preventDefault();
  navigate(url.pathname + url.search + url.hash);
}
