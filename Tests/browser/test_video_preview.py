"""Video previews in a muted inline `<video>`, in Chromium and in Firefox ESR alike: `format=mp4`
(H.264; Debian's Firefox decodes it with the system's libavcodec) and `format=webm` (VP9, with
an alpha stream when the animation has transparency) play, the video's `duration` is the
animation's `durationMs` to the millisecond, and the WebM frame drawn onto a canvas keeps the
animation's transparency in both engines (the alpha stream in BlockAdditions, AlphaMode 1).
"""
import urllib.parse

import pytest

from test_storyboard import open_host, host  # noqa: F401  (the fixture, reused)

# Plays a video preview in a muted inline <video>: {duration (s), width, height, advanced (its
# currentTime moved while playing), error}.
PLAY_VIDEO = r"""
const [url, done] = arguments;
const video = document.createElement('video');
video.muted = true;
video.playsInline = true;
video.loop = true;
video.addEventListener('error', () => done({ error: video.error ? `${video.error.code} ${video.error.message}` : 'error' }));
video.addEventListener('loadedmetadata', () => {
  const duration = video.duration;
  video.play().then(() => {
    const started = video.currentTime;
    setTimeout(() => done({ duration, width: video.videoWidth, height: video.videoHeight,
                            advanced: video.currentTime !== started || video.currentTime > 0, paused: video.paused }),
               400);
  }, (error) => done({ error: String(error) }));
});
video.src = url;
document.body.appendChild(video);
"""


def played_for_the_animations_duration(page, flipbook, host, image, script, video_format):
    """Plays `image`'s 63-px preview in `video_format` with `script`; checks that it played
    without error for the animation's `durationMs` to the millisecond, and returns what the
    script reported."""
    quoted = urllib.parse.quote(image)
    delays = flipbook.json(f"/images/{quoted}/delays")
    open_host(page, host)
    result = page.execute_async_script(script, f"/images/{quoted}/preview?width=63&format={video_format}")
    assert "error" not in result, result
    assert round(result["duration"] * 1000) == delays["durationMs"], (result, delays["durationMs"])
    return result


@pytest.mark.parametrize("image", ["orbit.gif", "orbit.png", "orbit.webp"])
def test_the_mp4_preview_plays_for_the_animations_duration(page, flipbook, host, image):
    """`format=mp4` in a `<video>`: the browser decodes it (H.264), plays it, and its `duration`
    is the animation's `durationMs` to the millisecond; an odd width comes out even."""
    result = played_for_the_animations_duration(page, flipbook, host, image, PLAY_VIDEO, "mp4")
    assert result["width"] == 62 and result["height"] % 2 == 0, result  # 63 px wide, made even
    assert result["advanced"] and not result["paused"], result


# Plays a WebM preview in a muted inline <video>, then draws the frame shown onto a canvas: as
# PLAY_VIDEO, with the least and the greatest alpha drawn (all 255 when the alpha stream is
# ignored).
PLAY_VIDEO_ALPHA = PLAY_VIDEO.replace(
    "advanced: video.currentTime !== started || video.currentTime > 0, paused: video.paused",
    "advanced: video.currentTime !== started || video.currentTime > 0, paused: video.paused, ...alphaOf(video)",
) + r"""
function alphaOf(video) {
  const canvas = document.createElement('canvas');
  [canvas.width, canvas.height] = [video.videoWidth, video.videoHeight];
  const context = canvas.getContext('2d');
  context.drawImage(video, 0, 0);
  const pixels = context.getImageData(0, 0, canvas.width, canvas.height).data;
  let [least, most] = [255, 0];
  for (let i = 3; i < pixels.length; i += 4) { least = Math.min(least, pixels[i]); most = Math.max(most, pixels[i]); }
  return { leastAlpha: least, mostAlpha: most };
}
"""


@pytest.mark.parametrize("image", ["orbit.gif", "orbit.webp"])
def test_the_webm_preview_plays_for_the_animations_duration_with_alpha(page, flipbook, host, image):
    """`format=webm` in a `<video>`: the browser decodes it (VP9), plays it, its `duration` is the
    animation's `durationMs` to the millisecond, an odd width stays odd, and the frame drawn has
    the animation's transparency (the alpha stream in BlockAdditions, AlphaMode 1)."""
    result = played_for_the_animations_duration(page, flipbook, host, image, PLAY_VIDEO_ALPHA, "webm")
    assert result["width"] == 63, result
    assert result["advanced"] and not result["paused"], result
    assert result["leastAlpha"] == 0 and result["mostAlpha"] == 255, result
