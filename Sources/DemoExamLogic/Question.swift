/// One question of the demo exam: multiple choice, scored against its right
/// choice, or free text, typed (with an input method if the session allows
/// one) and read by a person, so not scored.
public struct Question: Hashable, Sendable {
    public var prompt: String
    /// Up to four choices, shown numbered from 1; empty for a free-text question.
    public var choices: [String]
    /// Index into `choices` of the right answer; nil for a free-text question.
    public var correctChoice: Int?
    /// Whether a calculator may be used on it: an exam with such a question
    /// names the policy's calculator as a participant of its session.
    public var allowsCalculator: Bool

    public init(prompt: String, choices: [String], correctChoice: Int, allowsCalculator: Bool = false) {
        precondition(choices.indices.contains(correctChoice), "the correct choice must be one of the choices")
        self.prompt = prompt
        self.choices = choices
        self.correctChoice = correctChoice
        self.allowsCalculator = allowsCalculator
    }

    private init(freeTextPrompt prompt: String) {
        self.prompt = prompt
        self.choices = []
        self.correctChoice = nil
        self.allowsCalculator = false
    }

    /// A question answered by typing into a text field.
    public static func freeText(_ prompt: String) -> Question { Question(freeTextPrompt: prompt) }

    public var isFreeText: Bool { choices.isEmpty }
}

extension Question {
    /// The demo exam's questions: four multiple-choice questions (the first
    /// with a calculator beside it), then one in free text.
    public static let demo: [Question] = [
        Question(prompt: "What is 7 × 8?", choices: ["54", "56", "58", "64"], correctChoice: 1, allowsCalculator: true),
        Question(prompt: "Which planet is closest to the Sun?",
                 choices: ["Venus", "Earth", "Mercury", "Mars"], correctChoice: 2),
        Question(prompt: "What is the chemical symbol for sodium?",
                 choices: ["So", "Sd", "S", "Na"], correctChoice: 3),
        Question(prompt: "How many sides does a hexagon have?",
                 choices: ["6", "5", "8", "7"], correctChoice: 0),
        .freeText("Write the word “exam” in a language of your choice (試験, 시험, 考试, …)."),
    ]

    /// What `--auto` types into a free-text question.
    public static let autoFreeTextAnswer = "試験 exam"
}
