import Testing
@testable import StompboxAudio
