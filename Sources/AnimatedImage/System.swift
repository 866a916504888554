#if canImport(Glibc)
import Glibc
#endif

/// Facts about the machine that thread counts follow: the frame cache's decode pool and the
/// threads a renderer decodes ahead on.
public enum System {
    /// Cores online (at least 1).
    public static var coreCount: Int {
        max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    }
}
