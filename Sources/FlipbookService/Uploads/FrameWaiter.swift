import AnimatedImage
import HTTPServer

/// A frame request of an upload session whose frame has not arrived: what it asks for (an index,
/// or the frame shown at a time of the first play) and how to answer it. The session answers it
/// when an index of the prefix holds its frame or the session ends; its timer answers 503 when
/// its wait (`Prefer: wait`, at most `uploads.maxWaitSeconds`) runs out first.
final class FrameWaiter: Sendable {
    /// Which frame a request wants.
    enum Target: Sendable {
        case index(Int)
        /// The frame shown at this time (`?t=`).
        case time(PlaybackTime)
    }

    let target: Target
    /// Answers the request (once, from whoever resolves it).
    let answer: @Sendable (Resolution) -> Void

    /// How a wait ends.
    enum Resolution: Sendable {
        /// The frame is in the prefix of `progress`, or the session ended in `phase`.
        case ready(UploadSession.Phase, UploadSession.Progress)
        /// The wait ran out.
        case timedOut
        /// The session ended with this problem (the uploader's, for a body that is no image).
        case response(HTTPResponse)
    }

    init(target: Target, answer: @escaping @Sendable (Resolution) -> Void) {
        self.target = target
        self.answer = answer
    }

    /// The frame's index in `progress`'s prefix, when its data is all in.
    func index(in progress: UploadSession.Progress) -> Int? { Self.index(of: target, in: progress) }

    /// The index `target` names in `progress`'s prefix, when that frame's data is all in.
    static func index(of target: Target, in progress: UploadSession.Progress) -> Int? {
        guard let image = progress.image else { return nil }
        switch target {
        case .index(let index):
            return index < image.frameCount ? index : nil
        case .time(let time):
            // The prefix's frames, then one that never ends: a time past the frames in so far
            // lands on it and waits for more.
            let delays = image.timeline.rawDelaysMs + [1 << 40]
            let index = Timeline(rawDelaysMs: delays, playCount: 1).frameIndex(at: time)
            return index < image.frameCount ? index : nil
        }
    }

    func isReady(_ progress: UploadSession.Progress) -> Bool { index(in: progress) != nil }
}
