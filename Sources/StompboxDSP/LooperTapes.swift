import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The Looper's tapes: every track's two sides and the undo pool's, reserved whole (two minutes
/// a track) but resident only as far as they are used. A player who never loops, or loops for ten
/// seconds on one track, does not pay for eight tracks of two minutes.
///
/// Each region is made resident ahead of use, off the audio thread, so the audio thread never
/// takes a page fault: the audio thread publishes, per region, how many samples it may write
/// soon (`demand`), and a background thread makes that much resident every 20 ms; `init` makes
/// the initial demand resident before the Looper plays. Making a page resident never changes its
/// contents (`MADV_POPULATE_WRITE`, or `mlock` where the kernel is older than 5.14), so it is
/// safe beside the audio thread writing the tape.
///
/// Pages once resident stay so until the tapes are released (a long loop cleared leaves its
/// memory with the process, ready for the next one).
final class LooperTapes: @unchecked Sendable {
    /// Each region's first sample and its capacity in samples.
    let regions: [(base: UnsafeMutablePointer<Float>, capacity: Int)]
    /// Published by the audio thread: per region, how many samples from its start must be
    /// resident. Cells of their own, so the audio thread reaches them without touching this
    /// object's reference count.
    let demand: UnsafeMutablePointer<Atomic<Int>>
    private let memory: UnsafeMutableRawPointer
    private let bytes: Int
    private let stopping = Atomic<Bool>(false)
    private var thread: pthread_t?
    /// How far each region is resident (samples), under `lock`: the background thread and a
    /// test's `update` may run at once (never the audio thread).
    private var residentCounts: [Int]
    private let lock = NSLock()

    private static let pageFloats = 4096 / MemoryLayout<Float>.size

    /// `capacities` in samples; `initialDemand` (same count) is made resident before returning.
    init?(capacities: [Int], initialDemand: [Int]) {
        let rounded = capacities.map { ($0 + Self.pageFloats - 1) / Self.pageFloats * Self.pageFloats }
        let bytes = rounded.reduce(0, +) * MemoryLayout<Float>.size
        // Reserved, not committed: untouched pages cost nothing, and read as zeros.
        let flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE
        guard bytes > 0, let memory = mmap(nil, bytes, PROT_READ | PROT_WRITE, flags, -1, 0), memory != MAP_FAILED else { return nil }
        self.memory = memory
        self.bytes = bytes
        var regions: [(UnsafeMutablePointer<Float>, Int)] = []
        var next = memory.assumingMemoryBound(to: Float.self)
        for (capacity, size) in zip(capacities, rounded) {
            regions.append((next, capacity))
            next += size
        }
        self.regions = regions
        residentCounts = [Int](repeating: 0, count: capacities.count)
        demand = .allocate(capacity: capacities.count)
        for (i, wanted) in initialDemand.enumerated() { (demand + i).initialize(to: Atomic(wanted)) }
        update()
    }

    /// Starts the background thread (once).
    func start() {
        guard thread == nil else { return }
        let context = Unmanaged.passRetained(self).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setstacksize(&attributes, 64 * 1024)
        var t = pthread_t()
        let made = pthread_create(&t, &attributes, { context in
            let tapes = Unmanaged<LooperTapes>.fromOpaque(context!).takeRetainedValue()
            tapes.run()
            return nil
        }, context)
        if made == 0 { thread = t } else { Unmanaged<LooperTapes>.fromOpaque(context).release() }
    }

    /// Stops the background thread and waits for it. Not on the audio thread.
    func stop() {
        guard let t = thread else { return }
        stopping.store(true, ordering: .releasing)
        pthread_join(t, nil)
        thread = nil
    }

    deinit {
        munmap(memory, bytes)
        demand.deinitialize(count: regions.count)
        demand.deallocate()
    }

    /// Background thread: keeps the tapes resident ahead of the audio thread.
    private func run() {
        while !stopping.load(ordering: .acquiring) {
            update()
            usleep(20_000)
        }
    }

    /// One pass of the background thread (also for tests).
    func update() {
        lock.lock()
        defer { lock.unlock() }
        for r in regions.indices { populate(r, upTo: demand[r].load(ordering: .relaxed)) }
    }

    /// Makes region `r` resident up to `samples` now, whatever the audio thread asks for (a
    /// load is about to write it). Never on the audio thread.
    func makeResident(_ r: Int, upTo samples: Int) {
        lock.lock()
        defer { lock.unlock() }
        populate(r, upTo: samples)
    }

    /// How many samples of each region are resident (for tests and the benchmark).
    var resident: [Int] {
        lock.lock()
        defer { lock.unlock() }
        return residentCounts
    }

    private func populate(_ r: Int, upTo wanted: Int) {
        let (base, capacity) = regions[r]
        let target = min(capacity, (wanted + Self.pageFloats - 1) / Self.pageFloats * Self.pageFloats)
        let done = residentCounts[r]
        guard target > done else { return }
        if !Self.makeResident(UnsafeMutableRawPointer(base + done), (target - done) * MemoryLayout<Float>.size) { return }
        residentCounts[r] = target
    }

    /// Faults the pages in for writing without changing them.
    private static func makeResident(_ start: UnsafeMutableRawPointer, _ length: Int) -> Bool {
        let populateWrite: Int32 = 23   // MADV_POPULATE_WRITE, Linux 5.14
        if madvise(start, length, populateWrite) == 0 { return true }
        // Older kernels: locking faults the pages in; unlocking leaves them resident.
        if mlock(start, length) == 0 {
            munlock(start, length)
            return true
        }
        // Neither: the audio thread will fault the pages itself (minor faults, a few µs each).
        return false
    }
}
