// The controls of <flipbook-player> (web/flipbook-player.js) and its keyboard: play/pause, a
// frame back and forward, a scrubber (whose hover shows the storyboard tile of that time when the
// `storyboard` attribute asks for one), the speed and the time. They drive the player through its
// public methods (play, pause, step, seek, playbackRate) and read what they show from `state()`.

import { ICONS } from './player-style.js';

/** The player's controls: made when its `controls` attribute is set (and `poster-only` is not),
 *  removed when it is not; kept in step with playback by `sync()`. */
export class PlayerControls {
  #player; #shadow; #state;
  #parts = null;
  // Whether playback was on when the scrubber was grabbed (null: not grabbed).
  #scrubbing = null;
  // The storyboard manifest and where its sheet URLs are relative to; a counter that drops the
  // answer of a request made for an earlier image.
  #storyboard = null; #storyboardOrigin = ''; #storyboardRequest = 0;

  /** `state()` gives `{ meta, index, plays, playing, rate }`: the player's metadata (or null),
   *  the frame on the canvas, the plays completed, whether it plays and at what rate. */
  constructor(player, shadow, state) {
    this.#player = player;
    this.#shadow = shadow;
    this.#state = state;
  }

  /** Shows or removes the controls as the player's attributes say. */
  render() {
    const player = this.#player;
    const wanted = player.hasAttribute('controls') && !player.hasAttribute('poster-only');
    if (!wanted) {
      this.#parts?.root.remove();
      this.#parts = null;
      if (player.getAttribute('tabindex') === '0' && player.dataset.flipbookTabindex) player.removeAttribute('tabindex');
      return;
    }
    if (!player.hasAttribute('tabindex')) {
      player.setAttribute('tabindex', '0');
      player.dataset.flipbookTabindex = '1';
    }
    if (!this.#parts) this.#build();
    this.sync();
  }

  #build() {
    const player = this.#player;
    const root = document.createElement('div');
    root.className = 'controls';
    root.setAttribute('part', 'controls');
    root.innerHTML = `
      <button type="button" data-action="back" aria-label="Previous frame">${ICONS.back}</button>
      <button type="button" data-action="toggle" aria-label="Play">${ICONS.play}</button>
      <button type="button" data-action="forward" aria-label="Next frame">${ICONS.forward}</button>
      <input type="range" data-action="scrub" aria-label="Position" min="0" max="0" step="any" value="0">
      <select data-action="speed" aria-label="Speed">
        <option value="0.5">0.5×</option><option value="1" selected>1×</option><option value="2">2×</option>
      </select>
      <span class="time" part="time" aria-hidden="true"></span>
      <div class="thumb" part="storyboard" aria-hidden="true" hidden></div>`;
    const $ = (action) => root.querySelector(`[data-action="${action}"]`);
    const parts = { root, toggle: $('toggle'), back: $('back'), forward: $('forward'),
                    scrub: $('scrub'), speed: $('speed'), time: root.querySelector('.time'),
                    thumb: root.querySelector('.thumb') };
    this.#parts = parts;
    parts.toggle.addEventListener('click', () => this.toggle());
    parts.back.addEventListener('click', () => player.step(-1).catch(() => {}));
    parts.forward.addEventListener('click', () => player.step(1).catch(() => {}));
    parts.speed.addEventListener('change', (event) => { player.playbackRate = Number(event.target.value); });
    const scrub = parts.scrub;
    scrub.addEventListener('pointerdown', () => {
      if (this.#scrubbing === null) this.#scrubbing = this.#state().playing;
      player.pause().catch(() => {});
    });
    scrub.addEventListener('pointermove', (event) => this.#hoverThumb(event));
    scrub.addEventListener('pointerleave', () => { if (this.#parts) this.#parts.thumb.hidden = true; });
    scrub.addEventListener('input', () => {
      const { meta, plays } = this.#state();
      player.seek(plays * (meta?.durationMs || 0) + Number(scrub.value)).catch(() => {});
    });
    scrub.addEventListener('change', () => {
      const resume = this.#scrubbing;
      this.#scrubbing = null;
      if (resume) player.play().catch(() => {});
    });
    this.#shadow.append(root);
  }

  /** Shows the player's state: playing or not, the frame, the position, the rate. */
  sync() {
    const c = this.#parts;
    if (!c) return;
    const { meta, index, playing, rate } = this.#state();
    c.toggle.innerHTML = playing ? ICONS.pause : ICONS.play;
    c.toggle.setAttribute('aria-label', playing ? 'Pause' : 'Play');
    c.toggle.setAttribute('aria-pressed', String(playing));
    for (const control of [c.toggle, c.back, c.forward, c.scrub, c.speed]) control.disabled = !meta;
    if (!meta) return;
    const position = meta.frames[index].timestampMs;
    c.scrub.max = String(Math.max(meta.durationMs, 1));
    if (this.#scrubbing === null) c.scrub.value = String(position);
    const text = `frame ${index + 1} of ${meta.frameCount}, ${(position / 1000).toFixed(2)} s`;
    c.scrub.setAttribute('aria-valuetext', text);
    c.time.textContent = `${index + 1}/${meta.frameCount} · ${(position / 1000).toFixed(2)} s`;
    const shown = String(rate);
    if ([...c.speed.options].some((o) => o.value === shown)) c.speed.value = shown;
  }

  /** Plays when paused, pauses when playing. */
  toggle() {
    const player = this.#player;
    (this.#state().playing ? player.pause() : player.play()).catch(() => {});
  }

  /** The player's keys (whether or not the controls are shown): space plays and pauses, the
   *  arrows step a frame, Home goes to the start, End to the last frame. */
  onKey(event) {
    const player = this.#player;
    const { meta, index } = this.#state();
    if (!meta || event.altKey || event.ctrlKey || event.metaKey) return;
    const origin = event.composedPath()[0];
    const tag = origin && origin.tagName;
    // Native controls keep their own keys: buttons activate on space, the speed list opens.
    if (tag === 'SELECT' || (tag === 'BUTTON' && (event.key === ' ' || event.key === 'Enter'))) return;
    switch (event.key) {
      case ' ':
      case 'Spacebar':
        this.toggle();
        break;
      case 'ArrowLeft':
        player.step(-1).catch(() => {});
        break;
      case 'ArrowRight':
        player.step(1).catch(() => {});
        break;
      case 'Home':
        player.pause().then(() => player.seek(0)).catch(() => {});
        break;
      case 'End':
        player.pause().then(() => player.step(meta.frameCount - 1 - index)).catch(() => {});
        break;
      default:
        return;
    }
    event.preventDefault();
  }

  /** Fetches the storyboard the `storyboard` attribute asks for (its value: the storyboard's
   *  query, e.g. `tile=160`) of the image whose metadata is at `metaURL`; none without it. */
  loadStoryboard(metaURL) {
    this.#storyboard = null;
    const request = ++this.#storyboardRequest;
    const query = this.#player.getAttribute('storyboard');
    if (query === null || !metaURL || !this.#state().meta) return;
    const url = new URL(metaURL);
    this.#storyboardOrigin = url.origin;
    fetch(`${url.origin}${url.pathname.replace(/\/$/, '')}/storyboard${query ? `?${query}` : ''}`)
      .then((response) => (response.ok ? response.json() : null))
      .then((manifest) => { if (request === this.#storyboardRequest && manifest?.tiles) this.#storyboard = manifest; })
      .catch(() => {});
  }

  /** Shows the storyboard tile of the time under the pointer over the scrubber. */
  #hoverThumb(event) {
    const c = this.#parts;
    const board = this.#storyboard;
    if (!c || !board || !board.tiles.length) return;
    const rect = c.scrub.getBoundingClientRect();
    const fraction = Math.min(1, Math.max(0, (event.clientX - rect.left) / Math.max(1, rect.width)));
    const time = fraction * (this.#state().meta?.durationMs || 0);
    let tile = board.tiles[0];
    for (const t of board.tiles) { if (t.startMs <= time) tile = t; else break; }
    const sheet = board.sheets[tile.sheet];
    const thumb = c.thumb;
    thumb.style.width = `${tile.width}px`;
    thumb.style.height = `${tile.height}px`;
    thumb.style.backgroundImage = `url("${new URL(sheet.url, this.#storyboardOrigin + '/').href}")`;
    thumb.style.backgroundPosition = `-${tile.x}px -${tile.y}px`;
    const left = event.clientX - c.root.getBoundingClientRect().left - tile.width / 2;
    thumb.style.left = `${Math.max(0, left)}px`;
    thumb.dataset.index = String(tile.index);
    thumb.hidden = false;
  }
}
