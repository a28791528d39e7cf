/// A rectangle in the layout's design space.
public struct ExamRect: Hashable, Sendable {
    public var x: Double
    public var y: Double
    public var width: Double
    public var height: Double

    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x; self.y = y; self.width = width; self.height = height
    }

    public func contains(x px: Double, y py: Double) -> Bool {
        px >= x && px < x + width && py >= y && py < y + height
    }
}

/// A clickable button of a screen: what it does, what it says, where it is.
public struct ExamButton: Hashable, Sendable {
    public var action: ExamAction
    public var label: String
    public var frame: ExamRect
    /// Drawn highlighted (the chosen answer).
    public var isSelected: Bool
}

/// Where things are on each screen. Screens are designed on a 1280×720
/// canvas, scaled uniformly to fit the window and centred, so the renderer
/// draws in design units and clicks are mapped back the same way.
public struct ExamLayout: Hashable, Sendable {
    public static let designWidth = 1280.0
    public static let designHeight = 720.0

    public var windowWidth: Double
    public var windowHeight: Double

    public init(windowWidth: Double, windowHeight: Double) {
        self.windowWidth = max(windowWidth, 1)
        self.windowHeight = max(windowHeight, 1)
    }

    /// Window pixels per design unit.
    public var scale: Double {
        min(windowWidth / Self.designWidth, windowHeight / Self.designHeight)
    }

    /// Where the design canvas's top-left corner lies in the window.
    public var origin: (x: Double, y: Double) {
        ((windowWidth - Self.designWidth * scale) / 2, (windowHeight - Self.designHeight * scale) / 2)
    }

    /// Where a free-text question's answer field is drawn, in design units.
    public static let answerField = ExamRect(x: 140, y: 330, width: 1000, height: 90)

    /// A design-space rectangle in window pixels (text-input-v3's cursor
    /// rectangle is in surface coordinates).
    public func windowRect(_ rect: ExamRect) -> ExamRect {
        ExamRect(x: origin.x + rect.x * scale, y: origin.y + rect.y * scale,
                 width: rect.width * scale, height: rect.height * scale)
    }

    /// A window point in design units.
    public func designPoint(x: Double, y: Double) -> (x: Double, y: Double) {
        ((x - origin.x) / scale, (y - origin.y) / scale)
    }

    /// The buttons `screen` shows; for a question screen, `question` gives
    /// the choices and `selected` the recorded answer.
    public func buttons(for screen: ExamFlow.Screen, question: Question?, selected: Int?) -> [ExamButton] {
        switch screen {
        case .start:
            return [button(.begin, "Begin exam  (B)", x: 470, y: 440, width: 340, height: 80)]
        case .question(let index):
            var buttons: [ExamButton] = []
            for (choice, text) in (question?.choices ?? []).enumerated() {
                var choiceButton = button(.choose(choice), "\(choice + 1)   \(text)",
                                          x: 140, y: 200 + Double(choice) * 85, width: 1000, height: 70)
                choiceButton.isSelected = choice == selected
                buttons.append(choiceButton)
            }
            buttons.append(button(.end, "End exam  (E)", x: 140, y: 600, width: 300, height: 70))
            if index > 0 {
                buttons.append(button(.previous, "Back  (P)", x: 500, y: 600, width: 280, height: 70))
            }
            buttons.append(button(.next, "Next  (Enter)", x: 840, y: 600, width: 300, height: 70))
            return buttons
        case .paused:
            return [button(.end, "End exam  (E)", x: 490, y: 520, width: 300, height: 70)]
        case .locking, .unlocking:
            return []
        case .result:
            return [button(.quit, "Quit  (Q)", x: 490, y: 560, width: 300, height: 70)]
        case .error:
            return [
                button(.begin, "Try again  (B)", x: 320, y: 560, width: 300, height: 70),
                button(.quit, "Quit  (Q)", x: 660, y: 560, width: 300, height: 70),
            ]
        }
    }

    /// The action of the button under window point (x, y), if any.
    public func action(atWindowX x: Double, y: Double, screen: ExamFlow.Screen,
                       question: Question?, selected: Int?) -> ExamAction? {
        let point = designPoint(x: x, y: y)
        return buttons(for: screen, question: question, selected: selected)
            .first { $0.frame.contains(x: point.x, y: point.y) }?.action
    }

    private func button(_ action: ExamAction, _ label: String,
                        x: Double, y: Double, width: Double, height: Double) -> ExamButton {
        ExamButton(action: action, label: label, frame: ExamRect(x: x, y: y, width: width, height: height),
                   isSelected: false)
    }
}
