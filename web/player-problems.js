// What <flipbook-player> (web/flipbook-player.js) makes of a refused or failed request: the
// server's problem+json (RFC 9457) detail, its status and Retry-After, as one error type.

/** A refusal or failure, with the server's problem+json detail when there is one. */
export class FlipbookError extends Error {
  constructor(message, { status = 0, problem = null, retryAfter = null } = {}) {
    super(message);
    this.name = 'FlipbookError';
    this.status = status;
    this.problem = problem;
    this.retryAfter = retryAfter;
  }
}

/** The FlipbookError of a response that is not ok: its problem+json detail, else its status. */
export async function problemOf(response) {
  let problem = null;
  try {
    const type = response.headers.get('Content-Type') || '';
    if (type.includes('json')) problem = await response.json();
  } catch { problem = null; }
  const detail = problem && typeof problem.detail === 'string' ? problem.detail
    : `${response.status} ${response.statusText}`.trim();
  const retry = Number(response.headers.get('Retry-After'));
  return new FlipbookError(detail, { status: response.status, problem,
                                     retryAfter: Number.isFinite(retry) && retry >= 0 ? retry : null });
}
