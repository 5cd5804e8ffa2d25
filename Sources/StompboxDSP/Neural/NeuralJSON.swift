import Foundation

/// Typed reads from a model file's JSON (as `JSONSerialization` gives it), each failing with a
/// problem that names the key.
enum NeuralJSON {
    static func object(_ value: Any?, _ key: String) throws -> [String: Any] {
        guard let object = value as? [String: Any] else { throw NeuralModelProblem("\"\(key)\" is missing or not an object") }
        return object
    }

    static func array(_ value: Any?, _ key: String) throws -> [Any] {
        guard let array = value as? [Any] else { throw NeuralModelProblem("\"\(key)\" is missing or not a list") }
        return array
    }

    static func number(_ value: Any?) -> Double? {
        if let number = value as? NSNumber, !(value is Bool) { return number.doubleValue }
        if let double = value as? Double { return double }
        if let int = value as? Int { return Double(int) }
        return nil
    }

    static func double(_ value: Any?, _ key: String) throws -> Double {
        guard let number = number(value), number.isFinite else { throw NeuralModelProblem("\"\(key)\" is missing or not a number") }
        return number
    }

    static func int(_ value: Any?, _ key: String) throws -> Int {
        let number = try double(value, key)
        guard number == number.rounded(), abs(number) < 1e9 else { throw NeuralModelProblem("\"\(key)\" is not a whole number") }
        return Int(number)
    }

    static func bool(_ value: Any?, _ key: String) throws -> Bool {
        if let bool = value as? Bool { return bool }
        if let number = value as? NSNumber { return number.boolValue }
        throw NeuralModelProblem("\"\(key)\" is missing or not true/false")
    }

    static func string(_ value: Any?, _ key: String) throws -> String {
        guard let string = value as? String else { throw NeuralModelProblem("\"\(key)\" is missing or not text") }
        return string
    }

    /// A flat list of numbers as single-precision weights (read as the reference engines read
    /// them: the JSON number, then rounded to `Float`).
    static func floats(_ value: Any?, _ key: String) throws -> [Float] {
        guard let array = value as? [Any] else { throw NeuralModelProblem("\"\(key)\" is missing or not a list of numbers") }
        var floats = [Float]()
        floats.reserveCapacity(array.count)
        for element in array {
            guard let number = number(element), number.isFinite else { throw NeuralModelProblem("\"\(key)\" holds something that is not a finite number") }
            floats.append(Float(number))
        }
        return floats
    }
}

/// Weights read in order from a flat list, as NAM's builders consume them; too few is an error
/// naming how many the architecture needs, and `finish` checks none are left over.
struct WeightReader {
    let weights: [Float]
    private(set) var position = 0

    init(_ weights: [Float]) { self.weights = weights }

    mutating func take(_ count: Int) throws -> ArraySlice<Float> {
        guard count >= 0, position + count <= weights.count else {
            throw NeuralModelProblem("the file has \(weights.count) weights, fewer than its architecture needs")
        }
        defer { position += count }
        return weights[position..<(position + count)]
    }

    mutating func next() throws -> Float { try take(1).first! }

    func finish() throws {
        guard position == weights.count else {
            throw NeuralModelProblem("the file has \(weights.count) weights where its architecture needs \(position)")
        }
    }
}
