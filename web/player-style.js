// The look of <flipbook-player> (web/flipbook-player.js): its shadow root's stylesheet and the
// controls' icons. Pages restyle it through ::part() and the --flipbook-* custom properties.

const STYLE = `
:host { display: inline-block; position: relative; max-width: 100%; color: inherit; }
:host([hidden]) { display: none; }
:host(:focus-visible) { outline: 3px solid var(--flipbook-focus, #2563eb); outline-offset: 2px; }
.stage { position: relative; display: block; line-height: 0; }
canvas { display: block; max-width: 100%; height: auto; image-rendering: var(--flipbook-image-rendering, auto);
  background: var(--flipbook-backdrop, transparent); }
:host([image-rendering="pixelated"]) canvas { image-rendering: pixelated; }
:host([image-rendering="crisp-edges"]) canvas { image-rendering: crisp-edges; }
:host([image-rendering="smooth"]) canvas { image-rendering: auto; }
.error { line-height: 1.4; padding: 0.5em 0.75em; margin: 0.25em 0; border-radius: 4px;
  background: #fde8e8; color: #7f1d1d; font: 0.9rem/1.4 system-ui, sans-serif; }
.controls { display: flex; flex-wrap: wrap; align-items: center; gap: 0.35rem; margin-top: 0.4rem;
  font: 0.85rem/1.2 system-ui, sans-serif; }
.controls[hidden], .error[hidden] { display: none; }
.controls { position: relative; }
.thumb { position: absolute; bottom: 100%; margin-bottom: 0.3rem; pointer-events: none; background-repeat: no-repeat;
  border: 1px solid currentColor; background-color: #0008; }
.thumb[hidden] { display: none; }
button, select { font: inherit; min-width: 2.5rem; min-height: 2.25rem; border: 1px solid #8a8f98;
  border-radius: 4px; background: var(--flipbook-button, #f4f5f7); color: inherit; cursor: pointer; }
button svg { width: 1rem; height: 1rem; vertical-align: middle; fill: currentColor; }
input[type=range] { flex: 1 1 8rem; min-width: 6rem; min-height: 2.25rem; margin: 0; }
button:focus-visible, select:focus-visible, input:focus-visible {
  outline: 3px solid var(--flipbook-focus, #2563eb); outline-offset: 1px; }
.time { min-width: 7.5em; font-variant-numeric: tabular-nums; }
`;

export const ICONS = {
  play: '<svg viewBox="0 0 16 16" aria-hidden="true"><path d="M4 2.5v11l9-5.5z"/></svg>',
  pause: '<svg viewBox="0 0 16 16" aria-hidden="true"><path d="M3.5 2.5h3v11h-3zM9.5 2.5h3v11h-3z"/></svg>',
  back: '<svg viewBox="0 0 16 16" aria-hidden="true"><path d="M3 2.5h2v11H3zM13 2.5v11L6 8z"/></svg>',
  forward: '<svg viewBox="0 0 16 16" aria-hidden="true"><path d="M11 2.5h2v11h-2zM3 2.5v11L10 8z"/></svg>',
};

let sheet = null;
export function styleSheet() {
  // A constructed stylesheet: no <style> element, so a strict style-src CSP needs no hash.
  if (!sheet) { sheet = new CSSStyleSheet(); sheet.replaceSync(STYLE); }
  return sheet;
}
