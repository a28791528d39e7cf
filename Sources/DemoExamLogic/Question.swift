/// One multiple-choice question of the demo exam.
public struct Question: Hashable, Sendable {
    public var prompt: String
    /// Up to four choices, shown numbered from 1.
    public var choices: [String]
    /// Index into `choices` of the right answer.
    public var correctChoice: Int

    public init(prompt: String, choices: [String], correctChoice: Int) {
        precondition(choices.indices.contains(correctChoice), "the correct choice must be one of the choices")
        self.prompt = prompt
        self.choices = choices
        self.correctChoice = correctChoice
    }
}

extension Question {
    /// The demo exam's questions.
    public static let demo: [Question] = [
        Question(prompt: "What is 7 × 8?", choices: ["54", "56", "58", "64"], correctChoice: 1),
        Question(prompt: "Which planet is closest to the Sun?",
                 choices: ["Venus", "Earth", "Mercury", "Mars"], correctChoice: 2),
        Question(prompt: "What is the chemical symbol for sodium?",
                 choices: ["So", "Sd", "S", "Na"], correctChoice: 3),
        Question(prompt: "How many sides does a hexagon have?",
                 choices: ["6", "5", "8", "7"], correctChoice: 0),
    ]
}
