// <flipbook-player src="/images/{id}">: plays an animation from a Flipbook server's frames and
// delay table the way a browser plays the original file. A dependency-free ES module; no build.
//
// Timing (the FLAnimatedImageView model): requestAnimationFrame drives a time accumulator. A
// frame stays on the canvas for its effective delay (`delayMs`, what browsers play); the next
// frame appears on the first animation frame at or after it is due, never earlier. When the next
// frame is due but not decoded yet, the current one stays (a `stall` event), time stops at the
// end of its delay, and the late frame, once shown, gets its whole delay: the timeline shifts,
// frames are never skipped and never rushed. Loops follow `playCount` (0 = forever), then the
// last frame stays (`ended`).
//
// Frames come from /frames/{id}/{index}, about one second of playback ahead of the playhead
// (capped in frames and bytes), decoded off the main thread with createImageBitmap and drawn
// 1:1 on a canvas in an open shadow root (part="canvas").
//
// Sizes. The canvas is laid out at the image's size in CSS pixels, at most as wide as the page
// lets it be, always at the image's aspect; its bitmap is the frame drawn on it. The player
// measures that layout (a ResizeObserver, and a media query for devicePixelRatio changes) and
// asks for frames as wide as it is shown in device pixels (CSS width × devicePixelRatio),
// rounded up to a multiple of WIDTH_STEP so that a small resize refetches nothing:
// `?width=N&format=auto&quality=Q` (N in device pixels, no `dpr`: lossy WebP at quality Q when
// the Accept header lists WebP, which the player's does, else PNG). Shown at the image's own
// width or wider (or not laid out at all), it asks with no parameters: the full-size lossless
// frame, exactly the server's PNG. After a change of width, frames of the old width are still
// drawn until those of the new one replace them. Attributes: `rendition="full"` always full size;
// `rendition="NAME"` a preset of the server (`?r=NAME`, whatever its size); `quality="1…100"`
// the quality of scaled frames (default DEFAULT_QUALITY). A server that refuses scaled frames
// (400: renditions.allowArbitrary is off) gets full-size ones instead.
//
// Uploads in progress. `src="…/uploads/{uploadId}"` follows an upload session (docs/upload-sessions.md,
// docs/player.md): the player polls GET /uploads/{uploadId} every UPLOAD_POLL_MS, plays the frames that
// have arrived, holds the last one (a `stall` event, waitingFor the next index) until more arrive
// (a `progress` event each time the count grows), and does not loop meanwhile. Once the upload is
// stored the poll is redirected (303) to /images/{sha256}: the player takes that image's metadata
// and frames from then on (the frames already shown are byte for byte the image's, so they are
// kept), emits `progress` with `complete: true`, and plays on as for any image. A failed upload
// (410, 422) is an `error`.
//
// The rendition shown. Each frame's ETag names the rendition the server served (`full` or a key
// such as `480x270-webp-q55`: what `format=auto` or a preset resolved to); `frameRendition` says
// it for the frame on the canvas, as `GET /images/{id}/cache?rendition=` takes it.
//
// Engines. Tested in Chromium and Firefox ESR (docs/player.md, "In two engines"): the same code
// in both. createImageBitmap's `premultiplyAlpha: 'none'` and the canvas's premultiplied storage
// give each engine's own rounding of partially transparent pixels; no WebCodecs is used (Firefox's
// ImageDecoder returns premultiplied colour even when asked for straight alpha); colour
// management is the engine's (Firefox converts only tagged images, as it does the originals).
//
// Signed URLs. A signed `src` (`/images/{id}?…&sig=…`) is fetched with its query; the answer then
// lists a signed URL per frame (`frameUrls`, in the rendition the signer put in the query), and
// the player fetches those as they are instead of choosing a rendition itself.

import { PlayerControls } from './player-controls.js';
import { FrameWindow } from './player-frames.js';
import { FlipbookError, problemOf } from './player-problems.js';
import { styleSheet } from './player-style.js';

export { FlipbookError };

const UPLOAD_POLL_MS = 250;        // how often an upload in progress is asked for its frame count
// Scaled frames: widths are device pixels rounded up to a multiple of this; lossy WebP at this
// quality unless the `quality` attribute says otherwise. Chosen by `make bench-player-bytes`: one
// loop at 320 CSS px, DPR 1, headers and metadata included, costs 0.66× large.gif (1280×720,
// 300 frames) and 1.82× small.gif (480×270, 100 frames), against issue 21's goals of 1× and 2×.
// 75 cost 2.16× for small.gif; 60 cost 1.90×, too close to 2× for an encoder set a little
// faster (libwebp method 2 makes these frames 4% larger than method 4).
const WIDTH_STEP = 40;
const DEFAULT_QUALITY = 55;
// What the frames are asked for in: createImageBitmap decodes both (`format=auto` picks by it).
const FRAME_ACCEPT = 'image/webp,image/png;q=0.9';
// A frame's ETag names the rendition served (docs/renditions.md, "ETags and caching"):
// "f-{content}-{index}-{name}-r{revision}" ("u-{uploadId}-…" while an upload arrives), the name
// being z{level} for the full-size PNG, {key}-z{level} for another PNG and {key} for WebP.
const FRAME_ETAG = /^(?:W\/)?"(?:f-[0-9a-f]{32}|u-[0-9a-f]{32}\.\d+\.[\w-]{43})-\d+-(.+)-r\d+"$/;
const MIN_RATE = 0.25, MAX_RATE = 4;
// Animation-frame timestamps are multiples of 0.1 ms; sums of them drift by float rounding (a
// frame due at exactly 80 ms would otherwise wait for the next animation frame at 79.99999…).
const DUE_TOLERANCE_MS = 1e-3;

export class FlipbookPlayer extends HTMLElement {
  static get observedAttributes() { return ['src', 'controls', 'poster-only', 'rendition', 'quality', 'storyboard']; }

  #shadow; #canvas; #context; #controls; #errorBox;
  #meta = null; #etag = null; #metaURL = null; #framesURL = null; #generation = 0; #abort = null;
  // The decoded frames, the fetches under way and what to fetch next (player-frames.js).
  #frames = new FrameWindow((index) => this.#fetchFrame(index));
  #index = 0; #shownIndex = -1; #shownBitmap = null; #shownRendition = undefined; #plays = 0; #accum = 0; #last = null; #raf = 0;
  #playing = false; #ended = false; #stalled = false; #rate = 1; #loop = undefined;
  #hidden = false; #offscreen = false; #observer = null; #metadataWaiters = [];
  #drawWaiters = []; #userStarted = false;
  // The rendition frames are fetched in ({ query, width, height, scaled }), the canvas's width
  // in device pixels as last measured, and whether the server refused scaled frames.
  #rendition = null; #deviceWidth = 0; #scaledRefused = false;
  #sizeObserver = null; #resolution = null;
  // Following an upload in progress (src …/uploads/{id}): its frames grow; the poll's timer.
  #following = false; #pollTimer = 0;
  #tick = (now) => this.#onAnimationFrame(now);
  #onVisibility = () => { this.#hidden = document.visibilityState === 'hidden'; this.#updateRunning(); };
  #onResize = () => this.#resized();
  #onResolution = () => { this.#watchResolution(); this.#resized(); };

  constructor() {
    super();
    this.#shadow = this.attachShadow({ mode: 'open' });
    this.#shadow.adoptedStyleSheets = [styleSheet()];
    const stage = document.createElement('div');
    stage.className = 'stage';
    stage.setAttribute('part', 'stage');
    this.#canvas = document.createElement('canvas');
    this.#canvas.setAttribute('part', 'canvas');
    this.#canvas.setAttribute('role', 'img');
    this.#canvas.width = 0;
    this.#canvas.height = 0;
    stage.append(this.#canvas);
    this.#errorBox = document.createElement('div');
    this.#errorBox.className = 'error';
    this.#errorBox.setAttribute('part', 'error');
    this.#errorBox.setAttribute('role', 'alert');
    this.#errorBox.hidden = true;
    this.#shadow.append(stage, this.#errorBox);
    this.#controls = new PlayerControls(this, this.#shadow, () => ({
      meta: this.#meta, index: this.#index, plays: this.#plays, playing: this.#playing, rate: this.#rate,
    }));
    this.addEventListener('keydown', (event) => this.#controls.onKey(event));
  }

  // ------------------------------------------------------------------ lifecycle and attributes

  connectedCallback() {
    document.addEventListener('visibilitychange', this.#onVisibility);
    this.#hidden = document.visibilityState === 'hidden';
    if ('IntersectionObserver' in window) {
      this.#observer = new IntersectionObserver((entries) => {
        this.#offscreen = !entries[entries.length - 1].isIntersecting;
        this.#updateRunning();
      });
      this.#observer.observe(this);
    }
    if ('ResizeObserver' in window) {
      this.#sizeObserver = new ResizeObserver(this.#onResize);
      this.#sizeObserver.observe(this.#canvas);
    }
    this.#watchResolution();
    this.#controls.render();
    if (!this.#metaURL && this.getAttribute('src')) this.#load();
    else if (this.#following && !this.#pollTimer) this.#pollUpload(this.#generation);
  }

  disconnectedCallback() {
    document.removeEventListener('visibilitychange', this.#onVisibility);
    this.#observer?.disconnect();
    this.#observer = null;
    this.#sizeObserver?.disconnect();
    this.#sizeObserver = null;
    this.#resolution?.removeEventListener('change', this.#onResolution);
    this.#resolution = null;
    this.#cancelFrame();
    clearTimeout(this.#pollTimer);
    this.#pollTimer = 0;
  }

  attributeChangedCallback(name, oldValue, newValue) {
    if (oldValue === newValue) return;
    if (name === 'src' && this.isConnected) this.#load();
    if (name === 'controls' || name === 'poster-only') this.#controls.render();
    if (name === 'poster-only' && this.hasAttribute('poster-only')) this.pause();
    if (name === 'rendition' || name === 'quality') this.#resized();
    if (name === 'storyboard' && this.#meta) this.#controls.loadStoryboard(this.#metaURL);
  }

  get src() { return this.getAttribute('src') || ''; }
  set src(value) { this.setAttribute('src', value); }

  /** The metadata document, once fetched. */
  get metadata() { return this.#meta; }
  /** The frame on the canvas (its index); undefined until the metadata is in. */
  get currentFrame() { return this.#meta ? this.#index : undefined; }
  /** Milliseconds of playback: completed plays plus the position in the current one. */
  get currentTime() {
    if (!this.#meta) return 0;
    const frame = this.#meta.frames[this.#index];
    return this.#plays * this.#meta.durationMs + frame.timestampMs + Math.min(this.#accum, this.#delay(this.#index));
  }
  get duration() { return this.#meta ? this.#meta.durationMs : NaN; }
  get paused() { return !this.#playing; }
  get ended() { return this.#ended; }
  get stalled() { return this.#stalled; }
  /** Whether the player follows an upload still in progress (src …/uploads/{uploadId}). */
  get uploading() { return this.#following; }
  /** How many frames are decoded and ready. */
  get bufferedFrames() { return this.#frames.size; }
  /** The query frames are asked for with ('' = full size), once the metadata is in. */
  get frameQuery() { return this.#rendition ? this.#rendition.query : undefined; }
  /** The rendition of the frame on the canvas as the server named it, from that frame's ETag:
   *  `full` (the full-size PNG) or a rendition key such as `480x270-webp-q55` — what the server
   *  resolved `format=auto` and presets to, and what `GET /images/{id}/cache?rendition=` takes.
   *  Undefined until a frame is drawn; null when the answer's ETag named none. */
  get frameRendition() { return this.#shownRendition; }

  get playbackRate() { return this.#rate; }
  set playbackRate(value) {
    const rate = Number(value);
    if (!Number.isFinite(rate)) throw new RangeError('playbackRate must be a number');
    this.#rate = Math.min(MAX_RATE, Math.max(MIN_RATE, rate));
    this.#controls.sync();
    this.#schedule();
  }

  /** undefined: loop as the file says (playCount); true: forever; false: play once. */
  get loop() { return this.#loop; }
  set loop(value) {
    this.#loop = value === undefined || value === null ? undefined : Boolean(value);
  }

  // ------------------------------------------------------------------ the API

  /** Plays from the current position (from the start after the end); settles when the frame
   *  playback starts from is on the canvas. */
  async play() {
    this.#userStarted = true;
    await this.#metadataReady();
    if (this.hasAttribute('poster-only')) return this.#showIndex(0);
    if (this.#ended) { this.#ended = false; this.#plays = 0; this.#index = 0; this.#accum = 0; }
    if (!this.#playing) {
      this.#playing = true;
      this.#last = null;
      this.#controls.sync();
      this.#updateRunning();
    }
    await this.#showIndex(this.#index);
  }

  /** Stops on the frame shown; settles when it is on the canvas. */
  async pause() {
    if (this.#playing) {
      this.#playing = false;
      this.#cancelFrame();
      this.#controls.sync();
      this.dispatchEvent(new CustomEvent('pause', { detail: { index: this.#index } }));
    }
    if (this.#meta) await this.#showIndex(this.#index);
  }

  /** Goes to the frame shown at `ms` of playback (loops included; past the end, the last
   *  frame); keeps playing or paused as it was. Settles when that frame is on the canvas. */
  async seek(ms) {
    await this.#metadataReady();
    const meta = this.#meta;
    let time = Math.max(0, Number(ms) || 0);
    let plays = 0;
    if (meta.durationMs > 0) {
      plays = Math.floor(time / meta.durationMs);
      time -= plays * meta.durationMs;
    }
    const total = this.#totalPlays();
    let index;
    if (total !== Infinity && plays >= total) {
      plays = total - 1;
      index = meta.frameCount - 1;
      this.#accum = this.#delay(index);
      this.#ended = true;
    } else {
      index = this.#frameAt(time);
      this.#accum = time - meta.frames[index].timestampMs;
      this.#ended = false;
    }
    this.#plays = plays;
    this.#index = index;
    this.#last = null;
    this.#stalled = false;
    this.#schedule();
    await this.#showIndex(index);
  }

  /** Pauses and moves `delta` frames (±1), wrapping around. Settles when the frame is on the canvas. */
  async step(delta = 1) {
    await this.#metadataReady();
    await this.pause();
    const count = this.#meta.frameCount;
    const n = Math.trunc(Number(delta) || 0);
    const index = ((this.#index + n) % count + count) % count;
    this.#index = index;
    this.#accum = 0;
    this.#ended = false;
    this.#stalled = false;
    this.#schedule();
    await this.#showIndex(index);
  }

  /** Fetches the metadata again with If-None-Match; resolves to true when it changed (frames
   *  are then fetched anew). */
  async refresh() {
    if (!this.#metaURL) return false;
    const headers = this.#etag ? { 'If-None-Match': this.#etag } : {};
    const response = await fetch(this.#metaURL, { headers, cache: 'no-store' });
    if (response.status === 304) return false;
    if (!response.ok) throw await problemOf(response);
    const meta = await response.json();
    const etag = response.headers.get('ETag');
    if (etag && etag === this.#etag) return false;
    this.#etag = etag;
    this.#frames.clear();
    this.#adopt(meta);
    return true;
  }

  // ------------------------------------------------------------------ loading

  #load() {
    this.#generation += 1;
    this.#abort?.abort();
    this.#abort = new AbortController();
    this.#cancelFrame();
    this.#frames.clear();
    this.#controls.loadStoryboard(null);  // an answer for the image before is dropped
    this.#meta = null;
    this.#etag = null;
    this.#playing = false;
    this.#ended = false;
    this.#stalled = false;
    this.#index = 0; this.#plays = 0; this.#accum = 0; this.#shownIndex = -1;
    this.#shownRendition = undefined;
    this.#rendition = null;
    this.#scaledRefused = false;
    this.#following = false;
    clearTimeout(this.#pollTimer);
    this.#pollTimer = 0;
    this.#showError(null);
    const src = this.getAttribute('src');
    if (!src) return;
    let url;
    try {
      url = new URL(src, document.baseURI);
    } catch {
      this.#fail(new FlipbookError(`src "${src}" is not a URL`));
      return;
    }
    const upload = url.pathname.match(/^(.*)\/uploads\/([^/]+)\/?$/);
    if (upload) {
      this.#following = true;
      this.#metaURL = url.origin + upload[1] + '/uploads/' + upload[2];
      this.#framesURL = url.origin + upload[1] + '/frames/' + upload[2] + '/';
      this.#pollUpload(this.#generation);
      return;
    }
    const match = url.pathname.match(/^(.*)\/images\/([^/]+)\/?$/);
    if (!match) {
      this.#fail(new FlipbookError(`src must name an image (…/images/{id}) or an upload (…/uploads/{uploadId}), not ${url.pathname}`));
      return;
    }
    this.#metaURL = url.origin + match[1] + '/images/' + match[2] + url.search;  // a signed src keeps its query
    this.#framesURL = url.origin + match[1] + '/frames/' + match[2] + '/';
    const generation = this.#generation;
    fetch(this.#metaURL, { signal: this.#abort.signal })
      .then(async (response) => {
        if (!response.ok) throw await problemOf(response);
        this.#etag = response.headers.get('ETag');
        return response.json();
      })
      .then((meta) => { if (generation === this.#generation) this.#adopt(meta); })
      .catch((error) => { if (generation === this.#generation && error.name !== 'AbortError') this.#fail(error); });
  }

  /** Asks the upload session for its frames so far; again after UPLOAD_POLL_MS while it is in
   *  progress. Redirected to the stored image, it switches to that image. */
  #pollUpload(generation) {
    this.#pollTimer = 0;
    fetch(this.#metaURL, { signal: this.#abort.signal, cache: 'no-store' })
      .then(async (response) => {
        if (!response.ok) throw await problemOf(response);
        return { meta: await response.json(), url: response.url, etag: response.headers.get('ETag') };
      })
      .then(({ meta, url, etag }) => {
        if (generation !== this.#generation) return;
        const stored = new URL(url).pathname.match(/^(.*)\/images\/([^/]+)\/?$/);
        if (stored || meta.complete !== false) {
          this.#uploadStored(meta, url, stored, etag);
          return;
        }
        if (meta.frameCount > 0) {
          if (!this.#meta) this.#adopt(meta);
          else if (meta.frameCount > this.#meta.frameCount) this.#grow(meta);
        }
        this.#pollAgain(generation, UPLOAD_POLL_MS);
      })
      .catch((error) => {
        if (generation !== this.#generation || error.name === 'AbortError') return;
        // Busy (429, or 503 while draining): ask again later; anything else ends the following.
        if (error.status === 429 || error.status === 503) this.#pollAgain(generation, 1000 * Math.min(10, error.retryAfter ?? 1));
        else this.#fail(error);
      });
  }

  #pollAgain(generation, ms) {
    if (this.isConnected) this.#pollTimer = setTimeout(() => this.#pollUpload(generation), ms);
  }

  /** The upload is stored: the image's metadata (the poll's redirect target) replaces the upload's,
   *  and frames come from /frames/{id}/ from now on. */
  #uploadStored(meta, url, stored, etag) {
    this.#following = false;
    const target = new URL(url);
    this.#metaURL = target.origin + target.pathname;
    if (stored) this.#framesURL = target.origin + stored[1] + '/frames/' + stored[2] + '/';
    this.#etag = etag;
    if (this.#meta) this.#grow(meta); else this.#adopt(meta);
  }

  /** More frames of the upload are in (or it is stored): the longer metadata, the frames already
   *  decoded kept, and playback goes on from a stall. */
  #grow(meta) {
    this.#meta = meta;
    this.#canvas.setAttribute('aria-label', `Animation ${meta.id ?? meta.uploadId}: ${meta.frameCount} frame${meta.frameCount === 1 ? '' : 's'}`);
    this.#updateKeepAll();
    this.#controls.render();
    this.dispatchEvent(new CustomEvent('progress', {
      detail: { frameCount: meta.frameCount, complete: !this.#following, id: meta.id ?? null },
    }));
    this.#schedule();
    this.#updateRunning();
  }

  #adopt(meta) {
    this.#meta = meta;
    // Laid out at the image's size and aspect whatever the size of the frame on it (CSS of the
    // page, through ::part(canvas), still wins); then measured.
    this.#canvas.style.width = `${meta.width}px`;
    this.#canvas.style.aspectRatio = `${meta.width} / ${meta.height}`;
    this.#measure();
    this.#rendition = this.#chooseRendition();
    this.#canvas.width = this.#rendition.width;
    this.#canvas.height = this.#rendition.height;
    this.#shownBitmap = null;
    this.#shownRendition = undefined;
    this.#canvas.setAttribute('aria-label', `Animation ${meta.id ?? meta.uploadId}: ${meta.frameCount} frame${meta.frameCount === 1 ? '' : 's'}`);
    this.#context = this.#canvas.getContext('2d', { alpha: true });
    this.#context.imageSmoothingEnabled = false;
    this.#updateKeepAll();
    this.#index = Math.min(this.#index, meta.frameCount - 1);
    this.#shownIndex = -1;
    this.#controls.render();
    this.dispatchEvent(new CustomEvent('loadedmetadata', { detail: meta }));
    for (const resolve of this.#metadataWaiters.splice(0)) resolve();
    this.#controls.loadStoryboard(this.#metaURL);
    this.#showIndex(this.#index).catch(() => {});
    const reduced = window.matchMedia?.('(prefers-reduced-motion: reduce)').matches;
    if (this.hasAttribute('autoplay') && !this.hasAttribute('poster-only') && !reduced
        && (meta.frameCount > 1 || this.#following)) {
      this.play().catch(() => {});
    }
    this.#schedule();
  }

  #metadataReady() {
    if (this.#meta) return Promise.resolve();
    return new Promise((resolve) => this.#metadataWaiters.push(resolve));
  }

  #fail(error) {
    this.#playing = false;
    this.#cancelFrame();
    this.#showError(error.message);
    this.dispatchEvent(new CustomEvent('error', {
      detail: { message: error.message, status: error.status || 0, problem: error.problem || null },
    }));
  }

  #showError(message) {
    this.#errorBox.textContent = message || '';
    this.#errorBox.hidden = !message;
  }

  // ------------------------------------------------------------------ sizes

  /** The canvas's laid-out width in device pixels (0 when it is not laid out). */
  #measure() {
    const width = this.isConnected ? this.#canvas.getBoundingClientRect().width : 0;
    this.#deviceWidth = Math.round(width * (window.devicePixelRatio || 1));
  }

  /** The rendition to fetch frames in now (see the header). */
  #chooseRendition() {
    const meta = this.#meta;
    const full = { query: '', width: meta.width, height: meta.height, scaled: false };
    const name = (this.getAttribute('rendition') || '').trim();
    if (name === 'full') return full;
    if (name) {
      // A preset's size is the server's to say: the full size stands in (for the byte budgets)
      // until its first frame is in.
      const query = `?r=${encodeURIComponent(name)}`;
      const known = this.#rendition && this.#rendition.query === query ? this.#rendition : null;
      return known || { query, width: meta.width, height: meta.height, scaled: false };
    }
    const width = Math.ceil(this.#deviceWidth / WIDTH_STEP) * WIDTH_STEP;
    if (this.#scaledRefused || width <= 0 || width >= meta.width) return full;
    const asked = Number(this.getAttribute('quality'));
    const quality = Number.isInteger(asked) && asked >= 1 && asked <= 100 ? asked : DEFAULT_QUALITY;
    // The server's size rule (contain, no enlarging): round(h × width / w), halves up.
    const height = Math.max(1, Math.floor((2 * meta.height * width + meta.width) / (2 * meta.width)));
    return { query: `?width=${width}&format=auto&quality=${quality}`, width, height, scaled: true };
  }

  /** After a resize, a change of devicePixelRatio or of an attribute: a new rendition when the
   *  stepped width (or the attributes) changed; frames are refetched from the playhead on. */
  #resized() {
    if (!this.#meta) return;
    this.#measure();
    const next = this.#chooseRendition();
    if (next.query === this.#rendition.query) return;
    this.#rendition = next;
    this.#updateKeepAll();
    this.#schedule();
  }

  #watchResolution() {
    this.#resolution?.removeEventListener('change', this.#onResolution);
    this.#resolution = window.matchMedia?.(`(resolution: ${window.devicePixelRatio || 1}dppx)`) ?? null;
    this.#resolution?.addEventListener('change', this.#onResolution);
  }

  #frameBytes() { return this.#rendition.width * this.#rendition.height * 4; }

  #updateKeepAll() { this.#frames.keepAllIfFits(this.#frameBytes(), this.#meta.frameCount); }

  /** Whether frame `index` is decoded in the rendition asked for now. */
  #fresh(index) { return this.#frames.isFresh(index, this.#rendition.query); }

  /** The frames wanted now, in the order they will be shown (player-frames.js). */
  #wanted() {
    if (this.hasAttribute('poster-only')) return [this.#index];
    return FrameWindow.wanted({
      index: this.#index, plays: this.#plays, totalPlays: this.#totalPlays(), frameCount: this.#meta.frameCount,
      delay: (index) => this.#delay(index), rate: this.#rate, frameBytes: this.#frameBytes(), following: this.#following,
    });
  }

  /** Starts the fetches the playhead needs next and lets go of frames it no longer needs. */
  #schedule() {
    if (this.#meta) this.#frames.schedule(this.#wanted(), this.#rendition.query);
  }

  #fetchFrame(index) {
    const generation = this.#generation;
    const rendition = this.#rendition;
    // A signed metadata answer lists each frame's signed URL, in the rendition its signer chose
    // (docs/sources-and-signing.md, "Signed URLs"); otherwise the player picks the rendition from its size.
    const signed = this.#meta?.frameUrls?.[index];
    fetch(signed ? new URL(signed, this.#metaURL).href : this.#framesURL + index + rendition.query,
          { signal: this.#abort.signal, headers: { Accept: FRAME_ACCEPT } })
      .then(async (response) => {
        if (!response.ok) throw await problemOf(response);
        const name = FlipbookPlayer.#renditionNamed(response.headers.get('ETag'));
        // Decoded off the main thread. No colour-space option: the frame is converted exactly as
        // the browser converts the original (the served PNG or WebP carries the original's colour
        // information), and untagged frames are drawn as they are. Straight alpha, so a canvas
        // holding it premultiplies once, as it does for any image drawn on it.
        return { bitmap: await createImageBitmap(await response.blob(), { premultiplyAlpha: 'none' }), name };
      })
      .then(({ bitmap, name }) => {
        if (generation !== this.#generation) { bitmap.close(); return; }
        this.#frames.settle(index);
        const current = rendition.query === this.#rendition.query;
        if (!current && this.#fresh(index)) { bitmap.close(); this.#frames.pump(); return; }
        if (current && (bitmap.width !== this.#rendition.width || bitmap.height !== this.#rendition.height)) {
          // A preset's size (or a server that scaled otherwise): the byte budgets follow it.
          this.#rendition = { ...this.#rendition, width: bitmap.width, height: bitmap.height };
          this.#updateKeepAll();
        }
        this.#frames.put(index, bitmap, rendition.query, name);
        this.#frameArrived(index);
        // A frame of an earlier rendition: drawable now, but this one's is still to fetch.
        if (current) this.#frames.pump(); else this.#schedule();
      })
      .catch((error) => {
        if (generation !== this.#generation) return;
        this.#frames.settle(index);
        if (error.name === 'AbortError') return;
        if (error.status === 400 && rendition.scaled) {
          // Scaled frames refused (a presets-only server): full-size ones are always served.
          if (this.#scaledRefused) this.#schedule();
          else { this.#scaledRefused = true; this.#resized(); }
          return;
        }
        if (error.status === 429 || error.status === 503) {
          // The server is busy (decode queue full, or draining): the player stalls and asks again.
          setTimeout(() => { if (generation === this.#generation) this.#schedule(); },
                     1000 * Math.min(10, error.retryAfter ?? 1));
          return;
        }
        this.#fail(error);
      });
    this.#frames.fetching(index, rendition.query);
  }

  /** The rendition a frame's `etag` names (see FRAME_ETAG): `full`, a rendition key, or null. */
  static #renditionNamed(etag) {
    const match = FRAME_ETAG.exec(etag || '');
    if (!match) return null;
    const name = match[1].replace(/(^|-)z\d+$/, '');  // a PNG's deflate level is not part of the key
    return name === '' ? 'full' : name;
  }

  #frameArrived(index) {
    if (index === this.#index) {
      if (this.#shownIndex !== index) this.#draw(index);
      else if (this.#shownBitmap !== this.#frames.bitmap(index)) this.#draw(index, undefined, true);
    }
    if (this.#stalled) this.#updateRunning();
  }

  // ------------------------------------------------------------------ drawing

  /** Draws `index` now if decoded, else once it arrives; settles when it is on the canvas. */
  #showIndex(index) {
    if (this.#shownIndex === index && this.#frames.has(index)) return Promise.resolve();
    const done = new Promise((resolve, reject) => this.#drawWaiters.push({ index, resolve, reject }));
    if (this.#frames.has(index)) this.#draw(index);
    else this.#schedule();
    return done;
  }

  /** Draws frame `index`; a `frame` event tells of it unless it only replaces the same frame in
   *  another rendition (`replacing`). */
  #draw(index, time = performance.now(), replacing = false) {
    const bitmap = this.#frames.bitmap(index);
    if (!bitmap || !this.#context) return false;
    if (this.#canvas.width !== bitmap.width || this.#canvas.height !== bitmap.height) {
      // The canvas's bitmap is the frame's size (CSS keeps the size it is shown at); a resized
      // canvas starts from a fresh context state.
      this.#canvas.width = bitmap.width;
      this.#canvas.height = bitmap.height;
      this.#context.imageSmoothingEnabled = false;
    }
    // 'copy' replaces every pixel, transparent ones included: the canvas holds exactly the frame.
    this.#context.globalCompositeOperation = 'copy';
    this.#context.drawImage(bitmap, 0, 0);
    this.#shownIndex = index;
    this.#shownBitmap = bitmap;
    this.#shownRendition = this.#frames.renditionOf(index) ?? null;
    const waiters = this.#drawWaiters;
    this.#drawWaiters = [];
    for (const waiter of waiters) {
      if (waiter.index === index) waiter.resolve();
      else this.#drawWaiters.push(waiter);
    }
    this.#controls.sync();
    if (!replacing) this.dispatchEvent(new CustomEvent('frame', { detail: { index, time, play: this.#plays } }));
    return true;
  }

  // ------------------------------------------------------------------ the clock

  #totalPlays() {
    if (this.#loop === true) return Infinity;
    if (this.#loop === false) return 1;
    return this.#meta && this.#meta.playCount > 0 ? this.#meta.playCount : Infinity;
  }

  #delay(index) { return this.#meta.frames[index].delayMs; }

  #frameAt(ms) {
    const frames = this.#meta.frames;
    let low = 0, high = frames.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (frames[mid].timestampMs <= ms) low = mid; else high = mid - 1;
    }
    return low;
  }

  #updateRunning() {
    const run = this.#playing && !this.#hidden && !this.#offscreen && this.#meta;
    if (run && !this.#raf) {
      this.#last = null;
      this.#raf = requestAnimationFrame(this.#tick);
    } else if (!run) {
      this.#cancelFrame();
    }
  }

  #cancelFrame() {
    if (this.#raf) cancelAnimationFrame(this.#raf);
    this.#raf = 0;
  }

  #onAnimationFrame(now) {
    this.#raf = 0;
    if (!this.#playing || !this.#meta) return;
    if (this.#last === null) {
      // Playback (re)starts on this animation frame: time counts from here.
      this.#last = now;
      if (this.#shownIndex === this.#index) {
        this.dispatchEvent(new CustomEvent('play', { detail: { index: this.#index, time: now } }));
      } else {
        this.#last = null;  // the frame to start from is not on the canvas yet
      }
    } else {
      this.#advance(now);
    }
    if (this.#playing) this.#raf = requestAnimationFrame(this.#tick);
  }

  #advance(now) {
    const meta = this.#meta;
    this.#accum += (now - this.#last) * this.#rate;
    this.#last = now;
    const delay = this.#delay(this.#index);
    if (this.#accum < delay - DUE_TOLERANCE_MS) return;
    let next = this.#index + 1;
    let plays = this.#plays;
    if (next >= meta.frameCount && this.#following) {
      // An upload in progress: the next frame is still to arrive; hold this one (a stall).
      this.#holdFor(next, delay, now);
      return;
    }
    if (next >= meta.frameCount) {
      if (plays + 1 >= this.#totalPlays() || meta.frameCount === 1) {
        this.#accum = delay;
        this.#playing = false;
        this.#ended = true;
        this.#controls.sync();
        this.dispatchEvent(new CustomEvent('ended', { detail: { index: this.#index, time: now } }));
        return;
      }
      next = 0;
      plays += 1;
    }
    if (!this.#frames.has(next)) {
      this.#holdFor(next, delay, now);
      return;
    }
    // On time: what is left over carries to the next frame, so the timeline does not drift.
    // After a stall, or when the left-over is a whole frame (a long pause of the page), the
    // frame starts its full delay now instead of hurrying the ones after it.
    this.#accum = Math.max(0, this.#accum - delay);
    if (this.#stalled || this.#accum >= this.#delay(next)) this.#accum = 0;
    this.#stalled = false;
    this.#index = next;
    this.#plays = plays;
    this.#draw(next, now);
    this.#schedule();
  }

  /** Late: holds the frame on the canvas (time stops at the end of its `delay`) until frame
   *  `next` is decoded; a `stall` event when the hold begins. */
  #holdFor(next, delay, now) {
    this.#accum = delay;
    if (!this.#stalled) {
      this.#stalled = true;
      this.dispatchEvent(new CustomEvent('stall', { detail: { index: this.#index, waitingFor: next, time: now } }));
    }
    this.#schedule();
  }
}

if (!customElements.get('flipbook-player')) customElements.define('flipbook-player', FlipbookPlayer);
