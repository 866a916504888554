/// The windows as the policy works them out (rule 9 of ``CachePolicy``), carried out: for every
/// active image now and then (``refreshWindows(now:cap:)``), for one image as it becomes active
/// (``admit(_:)``), and images going idle as their active time passes (``expire(now:atMost:)``) — each
/// costing the images that changed, not the images held.
extension CacheState {
    /// Works the windows out again for every active image
    /// (``CachePolicy/windowPlan(for:now:cap:)``, windows capped at `cap` under pressure) and
    /// applies them.
    mutating func refreshWindows(now: Double, cap: Int?) {
        classify(now: now)
        apply(policy.windowPlan(for: self, now: now, cap: cap), now: now, cap: cap)
    }

    /// The windows worked out again for every active image when that is due
    /// (``windowsDue(now:)``), capped at `cap`; new entries found active or idle first.
    mutating func refreshWindowsIfDue(now: Double, cap: Int?) {
        classify(now: now)
        guard windowsDue(now: now) else { return }
        refreshWindows(now: now, cap: cap)
    }

    /// Whether the windows are due to be worked out for every active image: something needs it at
    /// once (a purge), or the policy says so (``CachePolicy/windowsDue(changes:active:since:)``).
    func windowsDue(now: Double) -> Bool {
        windowsStale
            || policy.windowsDue(changes: windowChanges, active: index.active.count, since: now - windowsRefreshedAt)
    }

    /// Sets every rendition's window as `plan` says, forgets what it says to forget, and notes
    /// when windows were last worked out.
    mutating func apply(_ plan: CachePolicy.WindowPlan, now: Double, cap: Int?) {
        for entry in plan.forget where entries[entry.id] === entry { forget(entry) }
        for (entry, keeping) in plan.active { keep(entry, keeping) }
        workingReserve = plan.workingReserve
        windowsRefreshedAt = now
        windowsStale = false
        windowChanges = 0
        windowCap = cap
    }

    /// Makes `entry` active at once, with windows for it and its image's other renditions that
    /// the policy works out for that image alone (``CachePolicy/admission(of:newly:in:cap:)``); the
    /// other active images' windows wait for the next ``refreshWindows(now:cap:)``. Also when one
    /// of an image's renditions is first played (the renditions decoded ahead may change).
    mutating func admit(_ entry: ImageEntry) {
        guard entries[entry.id] === entry else { return }
        let newly = !entry.isListedActive
        if newly {
            entry.isListedActive = true
            index.classified(entry)
            workingReserve = max(workingReserve, policy.workingReserve(for: entry, in: self))
        }
        for (sibling, keeping) in policy.admission(of: entry, newly: newly, in: self, cap: windowCap) {
            keep(sibling, keeping)
        }
        windowChanges += 1
    }

    /// The entries taken in since the last call that no request made active (``admit(_:)``) are
    /// found active or idle now (``CachePolicy/isActive(_:in:now:)``): an upload's frames left
    /// in the cache, nobody having asked, are idle.
    mutating func classify(now: Double) {
        guard !index.unclassified.isEmpty else { return }
        for entry in index.unclassified.entries {
            if policy.isActive(entry, in: self, now: now) { admit(entry) } else { setIdle(entry) }
        }
    }

    /// Images whose active time passed go idle (rule 9), `limit` of them at most (the rest at the
    /// next calls: when many expire at once, no one decision pays for all): taken from the least
    /// recently used end of the active order (``CacheIndex/byUse``), each looked at again — a hit
    /// may have asked for it since without the lock, and requests waiting keep it active.
    /// Returns whether more may be due.
    @discardableResult
    mutating func expire(now: Double, atMost limit: Int) -> Bool {
        var expired = 0
        while let (key, entry) = index.byUse.first, now - key.lastRequest > policy.activeSeconds {
            guard expired < limit else { return true }
            expired += 1
            index.examined += 1
            if policy.isActive(entry, in: self, now: now) {
                // Still wanted: placed again by its last use (later than its key), or — kept
                // active only by requests waiting — looked at again after a refresh period.
                index.reindex(entry)
                if now - entry.lastRequest > policy.activeSeconds {
                    index.deferExpiry(
                        of: entry, now: now, activeSeconds: policy.activeSeconds,
                        recheck: policy.tuning.windowRefreshSeconds)
                }
            } else {
                setIdle(entry)
                windowChanges += 1
                if isForgettable(entry) { forget(entry) }
            }
        }
        return false
    }

    /// How `entry` is kept now: a window, or made on demand.
    private func keep(_ entry: ImageEntry, _ keeping: CachePolicy.Keeping) {
        // A change of window or stall places the entry again by itself; one of these here.
        let (wasListed, wasOnDemand) = (entry.isListedActive, entry.onDemand)
        entry.isListedActive = true
        switch keeping {
        case .window(let frames, let whole):
            entry.isWhole = whole
            entry.onDemand = false
            entry.prefetchStalled = false
            entry.window = frames
        case .onDemand(let riding):
            entry.makeOnDemand(ridingFrames: riding)
        }
        if !wasListed || wasOnDemand != entry.onDemand { index.reindex(entry) }
    }

    /// `entry` is idle: no window, not made on demand, not listed among the active images.
    func setIdle(_ entry: ImageEntry) {
        index.classified(entry)
        let hadWindow = entry.window != 0
        entry.isListedActive = false
        entry.onDemand = false
        entry.isWhole = false
        entry.window = 0  // places it again when the window changed…
        if !hadWindow { index.reindex(entry) }  // …else here
    }
}
