import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The Looper's two tapes: reserved whole (two minutes each), but resident only as far as they
/// are used. A player who never loops, or loops for ten seconds, does not pay 46 MB of memory.
///
/// The pages are made resident ahead of use, off the audio thread, so the audio thread never
/// takes a page fault: tape A (the first pass) `ahead` samples beyond the recording position,
/// tape B (where overdubs keep the layer beneath) up to the loop's length once it has one.
/// A background thread does this every 20 ms from the `frontier` the audio thread publishes;
/// `prepare` makes the first `ahead` samples of tape A resident before the Looper plays.
/// Making a page resident never changes its contents (`MADV_POPULATE_WRITE`, or `mlock` where
/// the kernel is older than 5.14), so it is safe beside the audio thread writing the tape.
///
/// Pages once resident stay so until the tapes are released (a long loop cleared leaves its
/// memory with the process, ready for the next one).
final class LooperTapes: @unchecked Sendable {
    let a: UnsafeMutablePointer<Float>
    let b: UnsafeMutablePointer<Float>
    let capacity: Int
    /// Samples of tape A resident ahead of the recording position.
    let ahead: Int
    /// Published by the audio thread: the samples of tape A written so far (the first pass's
    /// length while recording) and whether a loop exists (then tape B is needed up to it).
    /// Cells of their own, so the audio thread reaches them without touching this object's
    /// reference count.
    let frontier: UnsafeMutablePointer<Atomic<Int>>
    let loopExists: UnsafeMutablePointer<Atomic<Bool>>
    private let bytes: Int
    private let stopping = Atomic<Bool>(false)
    private var thread: pthread_t?
    /// How far each tape is resident (samples), under `lock`: the background thread and a test's
    /// `update` may run at once (never the audio thread).
    private var residentA = 0
    private var residentB = 0
    private let lock = NSLock()

    private static let pageFloats = 4096 / MemoryLayout<Float>.size

    init?(capacity: Int, ahead: Int) {
        let bytes = (capacity * MemoryLayout<Float>.size + 4095) & ~4095
        // Reserved, not committed: untouched pages cost nothing, and read as zeros.
        let flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE
        guard let a = mmap(nil, bytes, PROT_READ | PROT_WRITE, flags, -1, 0), a != MAP_FAILED else { return nil }
        guard let b = mmap(nil, bytes, PROT_READ | PROT_WRITE, flags, -1, 0), b != MAP_FAILED else {
            munmap(a, bytes)
            return nil
        }
        self.a = a.assumingMemoryBound(to: Float.self)
        self.b = b.assumingMemoryBound(to: Float.self)
        self.bytes = bytes
        self.capacity = capacity
        self.ahead = ahead
        frontier = .allocate(capacity: 1)
        frontier.initialize(to: Atomic(0))
        loopExists = .allocate(capacity: 1)
        loopExists.initialize(to: Atomic(false))
        populate(tapeA: true, upTo: ahead)
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
        munmap(a, bytes)
        munmap(b, bytes)
        frontier.deinitialize(count: 1)
        frontier.deallocate()
        loopExists.deinitialize(count: 1)
        loopExists.deallocate()
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
        let written = frontier.pointee.load(ordering: .relaxed)
        populate(tapeA: true, upTo: written + ahead)
        if loopExists.pointee.load(ordering: .relaxed) { populate(tapeA: false, upTo: written) }
    }

    /// How many samples of each tape are resident (for tests and the benchmark).
    var resident: (a: Int, b: Int) {
        lock.lock()
        defer { lock.unlock() }
        return (residentA, residentB)
    }

    private func populate(tapeA: Bool, upTo wanted: Int) {
        let target = min(capacity, (wanted + Self.pageFloats - 1) / Self.pageFloats * Self.pageFloats)
        let done = tapeA ? residentA : residentB
        guard target > done else { return }
        let start = UnsafeMutableRawPointer(tapeA ? a + done : b + done)
        let length = (target - done) * MemoryLayout<Float>.size
        if !Self.makeResident(start, length) { return }
        if tapeA { residentA = target } else { residentB = target }
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
