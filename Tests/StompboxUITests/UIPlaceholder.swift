// Keeps this test target buildable until the window's tests land (issue 4); delete then.
import Testing
