// Keeps this test target buildable on the pulse branch until its own tests arrive; delete on merge.
import Testing
