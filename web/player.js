// One image's player page (GET /player/{id}): <flipbook-player controls>, the delay table as a
// bar chart (widths ∝ delay, the frame on the canvas highlighted) and a strip of the frames the
// server's cache holds right now of the rendition on the canvas (GET /images/{id}/cache?rendition=
// with the player's frameRendition, polled while the page is visible).
import './flipbook-player.js';
import { fillFacts, formatBytes, formatDuration, formatPlays } from './format.js';

const SVG = 'http://www.w3.org/2000/svg';
const CACHE_POLL_MS = 500;
const id = decodeURIComponent(location.pathname.replace(/^\/player\//, ''));
const player = document.getElementById('player');
const delays = document.getElementById('delays');
const cache = document.getElementById('cache');
const cacheStatus = document.getElementById('cache-status');
let bars = [];
let cells = [];
let polling = 0;          // the timer of the next poll of the cache
let asking = false;       // a poll's request is under way
let asked = undefined;    // the rendition the last poll asked about

function svg(name, attributes = {}) {
  const element = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, String(value));
  return element;
}

function drawDelays(meta) {
  // Bars on a time axis: x = the frame's start, width = its delay (ms), so widths are ∝ delay.
  const total = Math.max(1, meta.durationMs);
  const chart = svg('svg', { viewBox: `0 0 ${total} 10`, preserveAspectRatio: 'none', role: 'group',
                             'aria-label': `Delays of ${meta.frameCount} frames, ${formatDuration(meta.durationMs)} in all` });
  bars = meta.frames.map((frame) => {
    const bar = svg('rect', { x: frame.timestampMs, y: 0, width: Math.max(frame.delayMs, total / 2000), height: 10,
                              class: 'bar', tabindex: -1, 'data-index': frame.index });
    const title = svg('title');
    title.textContent = `Frame ${frame.index + 1}: ${frame.delayMs} ms`
      + (frame.rawDelayMs !== frame.delayMs ? ` (the file says ${frame.rawDelayMs} ms)` : '');
    bar.append(title);
    bar.addEventListener('click', () => player.seek(player.currentTime - (player.currentTime % Math.max(1, meta.durationMs)) + frame.timestampMs));
    chart.append(bar);
    return bar;
  });
  delays.replaceChildren(chart);
}

function highlight(index) {
  for (const bar of bars) bar.classList.toggle('current', Number(bar.dataset.index) === index);
}

function drawCacheStrip(meta) {
  const count = meta.frameCount;
  const chart = svg('svg', { viewBox: `0 0 ${count} 10`, preserveAspectRatio: 'none', role: 'img',
                             'aria-label': 'Frames in the server cache' });
  cells = [];
  for (let index = 0; index < count; index++) {
    const cell = svg('rect', { x: index + 0.08, y: 1, width: 0.84, height: 8, class: 'cell' });
    chart.append(cell);
    cells.push(cell);
  }
  cache.replaceChildren(chart);
}

function showResidency(state) {
  const held = new Set(state.cachedFrames);
  const count = cells.length;
  const inWindow = new Set();
  if (state.playhead !== null) {
    for (let step = 0; step < Math.min(state.window, count); step++) inWindow.add((state.playhead + step) % count);
  }
  cells.forEach((cell, index) => {
    cell.classList.toggle('held', held.has(index));
    cell.classList.toggle('window', inWindow.has(index));
    cell.classList.toggle('playhead', index === state.playhead);
  });
  const shown = state.rendition === 'full' ? 'full-size PNG' : state.rendition;
  cacheStatus.textContent = state.playhead === null
    ? `Not in the cache (${shown}).`
    : `${state.cachedFrames.length} of ${state.frameCount} frames held (${shown}); window ${state.window}${state.whole ? ' (the whole animation)' : ''}; playhead at frame ${state.playhead + 1}.`;
  cache.dataset.cached = state.cachedFrames.join(',');
  cache.dataset.rendition = state.rendition;
}

/** The query naming the rendition on the player's canvas, or a reason there is none yet. */
function shownRendition() {
  // The server's own name of what it served (the frames' ETag): the query the player sends
  // (format=auto) would resolve by this request's Accept (fetch's */*: PNG), not the player's.
  const name = player.frameRendition;
  if (name === undefined) return { wait: 'Waiting for the first frame.' };
  if (name === null) return { wait: "The server's answers do not name the rendition shown." };
  return { query: `?rendition=${encodeURIComponent(name)}` };
}

async function pollCache() {
  clearTimeout(polling);
  polling = 0;
  if (asking || document.visibilityState === 'hidden') return;
  asking = true;
  asked = player.frameRendition;
  const { query, wait } = shownRendition();
  if (wait) cacheStatus.textContent = wait;
  else {
    try {
      const response = await fetch(`/images/${encodeURIComponent(id)}/cache${query}`, { cache: 'no-store' });
      if (response.ok) showResidency(await response.json());
    } catch { /* the next poll tries again */ }
  }
  asking = false;
  polling = setTimeout(pollCache, CACHE_POLL_MS);
}

document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible' && !polling && !asking && cells.length) pollCache();
});

player.addEventListener('loadedmetadata', (event) => {
  const meta = event.detail;
  document.getElementById('title').textContent = meta.name || meta.id;
  document.title = `Flipbook — ${meta.name || meta.id}`;
  fillFacts(document.getElementById('facts'), [
    ['Format', `${meta.format.toUpperCase()} (${meta.mimeType})`],
    ['Size', `${meta.width} × ${meta.height}`],
    ['Frames', String(meta.frameCount)],
    ['Duration', formatDuration(meta.durationMs)],
    ['Loops', formatPlays(meta.playCount, meta.animated)],
    ['Delay GCD', `${meta.delayGcdMs} ms`],
    ['File', formatBytes(meta.fileBytes)],
    ['Truncated', meta.truncated ? 'yes: the frames before the damage are shown' : 'no'],
  ]);
  drawDelays(meta);
  drawCacheStrip(meta);
  highlight(player.currentFrame);
  if (!polling) pollCache();
});
player.addEventListener('frame', (event) => {
  highlight(event.detail.index);
  // Another rendition on the canvas (the first frame, or frames of a new size): asked about now.
  if (polling && player.frameRendition !== asked) pollCache();
});
player.addEventListener('error', (event) => {
  document.getElementById('title').textContent = `${id}: ${event.detail.message}`;
});

player.src = `/images/${encodeURIComponent(id)}`;
player.focus();
