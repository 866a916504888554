import Dispatch
import OutboundHTTP
import SourceRules

/// A resolver that answers only when the test lets it (``release``) or after 30 s: a DNS server
/// that hangs, for the deadline of a source fetch's name lookup.
public struct HangingResolver: SourceResolver {
    /// Signalled by the test to let the lookup answer.
    public let release = DispatchSemaphore(value: 0)
    public let answer: [IPAddress]

    public init(answer: [IPAddress]) {
        self.answer = answer
    }

    public func addresses(of name: String) -> [IPAddress] {
        _ = release.wait(timeout: .now() + 30)
        return answer
    }
}
