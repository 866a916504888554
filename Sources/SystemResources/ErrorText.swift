import FoundationEssentials
import Glibc  // strerror

/// An error in words for a message: a file operation's failure as the system words it
/// (`strerror`: "Permission denied"), anything else as it describes itself.
public enum ErrorText {
    public static func of(_ error: any Error) -> String {
        if let posix = error as? POSIXError { return String(cString: strerror(posix.code.rawValue)) }
        if let cocoa = error as? CocoaError, let posix = cocoa.underlying as? POSIXError {
            return String(cString: strerror(posix.code.rawValue))
        }
        return "\(error)"
    }
}
