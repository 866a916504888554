// Small text helpers shared by the pages.

/** "960 ms", "4.2 s". */
export function formatDuration(ms) {
  if (ms < 1000) return `${ms} ms`;
  return `${(ms / 1000).toFixed(ms < 10000 ? 2 : 1)} s`;
}

/** "forever", "once", "3 times". */
export function formatPlays(playCount, animated = true) {
  if (!animated) return 'still';
  if (playCount === 0) return 'loops forever';
  return playCount === 1 ? 'plays once' : `plays ${playCount} times`;
}

/** "4.6 KB". */
export function formatBytes(bytes) {
  if (bytes < 1000) return `${bytes} B`;
  if (bytes < 1e6) return `${(bytes / 1e3).toFixed(1)} KB`;
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

/** The detail of a problem+json body, or a fallback sentence. */
export function problemDetail(text, status) {
  try {
    const problem = JSON.parse(text);
    if (problem && typeof problem.detail === 'string') return problem.detail;
  } catch { /* not JSON */ }
  return `The server answered ${status}.`;
}

/** A <dl> filled from [term, description] pairs. */
export function fillFacts(list, pairs) {
  list.replaceChildren();
  for (const [term, description] of pairs) {
    const dt = document.createElement('dt');
    dt.textContent = term;
    const dd = document.createElement('dd');
    dd.textContent = description;
    list.append(dt, dd);
  }
}
