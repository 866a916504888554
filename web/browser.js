// The image browser (GET /): every image with its poster and facts, paged with `next`, and an
// upload area (file picker and drag-and-drop) with a progress bar. An upload opens a session
// (POST /uploads) and sends the file to it (PUT /uploads/{uploadId}) while a <flipbook-player>
// follows the session, playing the frames that have arrived as the bar runs and ending on the
// stored image; a server that opens no session (429: too many in progress) gets POST /images.
// Posters are frame 0 at the size the card shows them in device pixels (CSS width ×
// devicePixelRatio, rounded up to a multiple of 40 px as the player rounds), as lossy WebP
// where the browser takes it (`format=auto`); at the image's own width or wider, the full-size
// frame itself. A card that grows gets a larger poster, one that shrinks keeps the one it has.
// An animated image's card shows its animated preview (GET /images/{id}/preview at the poster's
// size) instead, in the cheapest format the browser plays: a <picture> whose sources are the
// AVIF sequence (`format=avif`, about a third of lossy WebP's bytes) then the animated WebP
// (`format=webp`), each applying only without `prefers-reduced-motion` (then the poster stays);
// the browser takes the first whose type it decodes. A preview that cannot be had (still being
// made) leaves the poster.
import { fillFacts, formatBytes, formatDuration, formatPlays, problemDetail } from './format.js';
import './flipbook-player.js';

const PAGE_SIZE = 60;
const POSTER_STEP = 40;       // device pixels, as <flipbook-player> steps its frame widths
const POSTER_QUALITY = 75;
// The animated previews, in the order a <picture> offers them: the smallest first. AVIF at its
// default quality (44: libaom's level 35); WebP lossy at the posters' quality.
const PREVIEW_QUERIES = { 'image/avif': 'format=avif', 'image/webp': `format=webp&quality=${POSTER_QUALITY}` };
const list = document.getElementById('images');
const listStatus = document.getElementById('list-status');
const more = document.getElementById('more');
const shown = new Map();  // id → <li>
let next = undefined;     // the cursor of the next page; null after the last
let loading = false;

// ------------------------------------------------------------------ posters

const posters = new WeakMap();  // <img> → the image it shows
const resizes = 'ResizeObserver' in window
  ? new ResizeObserver((entries) => { for (const entry of entries) sizePoster(entry.target); }) : null;

/** Sets the poster's source for the width it is shown at, unless it already has one as wide. */
function sizePoster(poster) {
  const image = posters.get(poster);
  if (!image) return;
  const device = Math.round(poster.getBoundingClientRect().width * (window.devicePixelRatio || 1));
  const width = Math.ceil(device / POSTER_STEP) * POSTER_STEP;
  const full = width <= 0 || width >= image.width;
  const current = Number(poster.dataset.width || 0);
  if (poster.getAttribute('src') && (current === 0 || (!full && width <= current))) return;
  poster.dataset.width = full ? '0' : String(width);
  const frame = `/frames/${encodeURIComponent(image.id)}/0`;
  for (const preview of poster.parentElement?.querySelectorAll('source') ?? []) {
    const path = `/images/${encodeURIComponent(image.id)}/preview`;
    const query = PREVIEW_QUERIES[preview.type];
    preview.srcset = full ? `${path}?${query}` : `${path}?width=${width}&${query}`;
  }
  poster.src = full ? frame : `${frame}?width=${width}&format=auto&quality=${POSTER_QUALITY}`;
}

/** `poster` inside a <picture> whose sources are the animated preview, AVIF first (set by sizePoster). */
function withPreview(poster) {
  const picture = document.createElement('picture');
  const previews = Object.keys(PREVIEW_QUERIES).map((type) => {
    const preview = document.createElement('source');
    preview.type = type;
    preview.media = '(prefers-reduced-motion: no-preference)';
    return preview;
  });
  picture.append(...previews, poster);
  poster.addEventListener('error', () => {
    if (!poster.currentSrc.includes('/preview')) return;
    for (const preview of previews) preview.remove();  // back to the poster
  });
  return picture;
}

function card(image) {
  const item = document.createElement('li');
  item.className = 'card';
  item.dataset.id = image.id;
  const link = document.createElement('a');
  link.href = `/player/${encodeURIComponent(image.id)}`;
  link.className = 'poster';
  const poster = document.createElement('img');
  poster.alt = '';
  poster.width = image.width;
  poster.height = image.height;
  poster.loading = 'lazy';
  poster.decoding = 'async';
  const name = document.createElement('span');
  name.className = 'name';
  name.textContent = image.name || image.id;  // the uploaded file's name, when it had one
  if (image.name) name.title = image.id;
  link.append(image.animated ? withPreview(poster) : poster, name);
  const facts = document.createElement('dl');
  facts.className = 'facts compact';
  fillFacts(facts, [
    ['Format', image.format.toUpperCase()],
    ['Size', `${image.width} × ${image.height}`],
    ['Frames', String(image.frameCount)],
    ['Duration', formatDuration(image.durationMs)],
    ['Loops', formatPlays(image.playCount, image.animated)],
    ['File', formatBytes(image.fileBytes)],
  ]);
  item.append(link, facts);
  return item;
}

function add(image, { first = false } = {}) {
  const item = card(image);
  const existing = shown.get(image.id);
  if (existing) {
    resizes?.unobserve(existing.querySelector('img'));
    existing.replaceWith(item);
  } else if (first) list.prepend(item);
  else list.append(item);
  shown.set(image.id, item);
  const poster = item.querySelector('img');
  posters.set(poster, image);
  sizePoster(poster);  // laid out now (the width and height attributes give its box): its size is known
  resizes?.observe(poster);
}

async function loadPage() {
  if (loading || next === null) return;
  loading = true;
  more.disabled = true;
  try {
    const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
    if (next) query.set('after', next);
    const response = await fetch(`/images?${query}`);
    if (!response.ok) throw new Error(problemDetail(await response.text(), response.status));
    const page = await response.json();
    for (const image of page.images) add(image);
    next = page.next;
    listStatus.textContent = shown.size === 0 ? 'No images yet.' : `${shown.size} image${shown.size === 1 ? '' : 's'}${next ? ' so far' : ''}.`;
  } catch (error) {
    listStatus.textContent = `The list could not be loaded: ${error.message}`;
  } finally {
    loading = false;
    more.disabled = false;
    more.hidden = next === null;
  }
}

more.addEventListener('click', () => loadPage());
// Load the next page by itself when the button scrolls into view.
new IntersectionObserver((entries) => {
  if (entries.some((entry) => entry.isIntersecting)) loadPage();
}).observe(more);

// ------------------------------------------------------------------ upload

const input = document.getElementById('file');
const drop = document.getElementById('drop');
const progress = document.getElementById('progress');
const uploadStatus = document.getElementById('upload-status');

const preview = document.getElementById('upload-preview');

/** Opens an upload session; resolves to its URL (/uploads/{uploadId}), or null when the server
 *  opens none (the upload then goes to POST /images). */
async function openSession() {
  try {
    const response = await fetch('/uploads', { method: 'POST' });
    return response.status === 201 ? response.headers.get('Location') : null;
  } catch {
    return null;
  }
}

/** Stops following `session` (its upload failed), unless the preview follows a later one. */
function hidePreview(session) {
  if (preview.getAttribute('src') !== session) return;
  preview.removeAttribute('src');
  preview.hidden = true;
}

async function upload(file) {
  const session = await openSession();
  if (session) {
    preview.src = session;  // follows the upload: plays the frames in so far, then the stored image
    preview.hidden = false;
  }
  const request = new XMLHttpRequest();
  request.open(session ? 'PUT' : 'POST', session || '/images');
  request.setRequestHeader('Content-Disposition', `attachment; filename*=UTF-8''${encodeURIComponent(file.name)}`);
  progress.hidden = false;
  progress.value = 0;
  progress.removeAttribute('data-done');
  uploadStatus.className = 'status';
  uploadStatus.textContent = `Uploading ${file.name}…`;
  request.upload.addEventListener('progress', (event) => {
    if (event.lengthComputable) progress.value = Math.round((100 * event.loaded) / event.total);
  });
  request.addEventListener('load', () => {
    progress.value = 100;
    if (request.status === 200 || request.status === 201) {
      const image = JSON.parse(request.responseText);
      add({ ...image, source: 'upload' }, { first: true });
      uploadStatus.textContent = request.status === 201
        ? `${file.name} added as ${image.id}.` : `${file.name} was already here (${image.id}).`;
      listStatus.textContent = `${shown.size} image${shown.size === 1 ? '' : 's'}.`;
    } else {
      if (session) hidePreview(session);
      uploadStatus.className = 'status refused';
      uploadStatus.textContent = `${file.name} was refused: ${problemDetail(request.responseText, request.status)}`;
    }
    progress.dataset.done = '1';
  });
  request.addEventListener('error', () => {
    if (session) hidePreview(session);
    uploadStatus.className = 'status refused';
    uploadStatus.textContent = `${file.name} could not be sent (the connection failed).`;
  });
  request.send(file);
}

input.addEventListener('change', () => {
  for (const file of input.files) upload(file);
  input.value = '';
});
for (const type of ['dragenter', 'dragover']) {
  drop.addEventListener(type, (event) => {
    event.preventDefault();
    drop.classList.add('over');
  });
}
for (const type of ['dragleave', 'drop']) {
  drop.addEventListener(type, () => drop.classList.remove('over'));
}
drop.addEventListener('drop', (event) => {
  event.preventDefault();
  for (const file of event.dataTransfer.files) upload(file);
});

loadPage();
