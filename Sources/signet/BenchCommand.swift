enum BenchCommand { static func run(_ args: [String]) -> Int32 { 2 } }
