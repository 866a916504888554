// The frames a <flipbook-player> holds: the decoded bitmaps (each with the rendition it is of),
// the fetches under way, and which frames to fetch next — the current one, then about a second
// of playback ahead, at most PARALLEL_FETCHES at a time — letting go of those no longer wanted.
// The element owns the fetch itself (URLs, errors, what a refusal means); this keeps the window.

const PREFETCH_MS = 1000;          // playback time fetched ahead of the playhead
const PREFETCH_MAX_FRAMES = 48;    // … but never more frames than this
const KEEP_ALL_BYTES = 48 << 20;   // decoded bytes under which every frame is kept (loops refetch nothing)
const AHEAD_BYTES = 96 << 20;      // decoded bytes the ahead window may hold otherwise
const PARALLEL_FETCHES = 4;

export class FrameWindow {
  // index → { bitmap, query, name }: a decoded frame, the rendition it was asked for in (query)
  // and the server's name of what it served (the rendition key, see renditionOf); index → the
  // query of the fetch under way; the frames to fetch next, in order.
  #bitmaps = new Map(); #pending = new Map(); #queue = [];
  #keepAll = false;
  #start;

  /** `start(index)` begins fetching frame `index` (it calls ``fetching`` and, when the fetch
   *  ends, ``put`` or ``settle``). */
  constructor(start) { this.#start = start; }

  get size() { return this.#bitmaps.size; }
  has(index) { return this.#bitmaps.has(index); }
  bitmap(index) { return this.#bitmaps.get(index)?.bitmap; }
  /** The server's name of the rendition frame `index` is decoded in (undefined when not decoded). */
  renditionOf(index) { return this.#bitmaps.get(index)?.name; }
  /** Whether frame `index` is decoded in rendition `query`. */
  isFresh(index, query) { return this.#bitmaps.get(index)?.query === query; }

  /** Keeps every frame when all of them, `frameBytes` each decoded, fit KEEP_ALL_BYTES. */
  keepAllIfFits(frameBytes, frameCount) { this.#keepAll = frameBytes * frameCount <= KEEP_ALL_BYTES; }

  /** The frames wanted now, in the order they will be shown: `index`, then about a second of
   *  playback ahead (scaled by `rate`), looping when the animation loops (`plays` of
   *  `totalPlays` so far) — unless `following` an upload, whose next frames are still to come. */
  static wanted({ index, plays, totalPlays, frameCount, delay, rate, frameBytes, following }) {
    const wanted = [index];
    const maxFrames = Math.max(1, Math.min(PREFETCH_MAX_FRAMES, Math.floor(AHEAD_BYTES / frameBytes)));
    let ahead = 0;
    while (wanted.length <= maxFrames && ahead < PREFETCH_MS * rate) {
      ahead += delay(index);
      index += 1;
      if (index >= frameCount) {
        if (following) break;  // the frames after the last one in are still to arrive
        plays += 1;
        if (plays >= totalPlays) break;
        index = 0;
      }
      if (wanted.includes(index)) break;
      wanted.push(index);
    }
    return wanted;
  }

  /** Lets go of the frames not `wanted` (unless every frame is kept) and fetches the wanted ones
   *  not decoded in rendition `query` yet; frames of another rendition stay drawable until this
   *  one's replace them. */
  schedule(wanted, query) {
    if (!this.#keepAll) {
      const keep = new Set(wanted);
      for (const [index, { bitmap }] of this.#bitmaps) {
        if (!keep.has(index)) { bitmap.close(); this.#bitmaps.delete(index); }
      }
    }
    this.#queue = wanted.filter((index) => !this.isFresh(index, query) && !this.#pending.has(index));
    this.pump();
  }

  /** Starts queued fetches while fewer than PARALLEL_FETCHES are under way. */
  pump() {
    while (this.#pending.size < PARALLEL_FETCHES && this.#queue.length > 0) this.#start(this.#queue.shift());
  }

  /** A fetch of frame `index` in rendition `query` began. */
  fetching(index, query) { this.#pending.set(index, query); }

  /** The fetch of frame `index` ended without a frame. */
  settle(index) { this.#pending.delete(index); }

  /** The fetch of frame `index` brought `bitmap`, asked for in rendition `query` and named `name`
   *  by the server: it replaces what was kept. */
  put(index, bitmap, query, name) {
    this.#pending.delete(index);
    this.#bitmaps.get(index)?.bitmap.close();
    this.#bitmaps.set(index, { bitmap, query, name });
  }

  /** Lets go of every frame and forgets the fetches under way (their answers are ignored). */
  clear() {
    for (const { bitmap } of this.#bitmaps.values()) bitmap.close();
    this.#bitmaps.clear();
    this.#pending.clear();
    this.#queue = [];
  }
}
