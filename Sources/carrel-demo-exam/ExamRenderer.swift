import AssessmentKit
import CCairoLib
import DemoExamLogic

/// Draws the flow's screen with cairo: big, plain text on a flat colour per
/// screen, so a screenshot says at a glance which screen is shown. Draws in
/// ExamLayout's 1280×720 design units. A free-text question is drawn in a
/// family fontconfig resolves to Noto Sans CJK, whose one font holds Latin,
/// kana, kanji, hangul and hanzi (cairo's text calls do not fall back
/// between fonts).
final class ExamRenderer {
    private typealias RGB = (Double, Double, Double)
    private static let font = "DejaVu Sans"
    private static let answerFont = "Noto Sans CJK JP"
    /// Where the last paint put the answer field's cursor, in design units;
    /// nil when no field was shown.
    private(set) var caret: ExamRect?

    func paint(_ flow: ExamFlow, into cairo: OpaquePointer, width: Double, height: Double) {
        let layout = ExamLayout(windowWidth: width, windowHeight: height)
        caret = nil
        let background = Self.background(for: flow.screen)
        setColor(cairo, background)
        cairo_paint(cairo)
        cairo_save(cairo)
        cairo_translate(cairo, layout.origin.x, layout.origin.y)
        cairo_scale(cairo, layout.scale, layout.scale)
        drawText(for: flow, cairo)
        let current = flow.currentQuestion
        for button in layout.buttons(for: flow.screen, question: current?.question,
                                     selected: current.flatMap { flow.answers[$0.index] }) {
            drawButton(button, cairo)
        }
        cairo_restore(cairo)
    }

    private static func background(for screen: ExamFlow.Screen) -> RGB {
        switch screen {
        case .start, .locking, .unlocking: return (0.16, 0.20, 0.28)
        case .question: return (0.96, 0.96, 0.93)
        case .paused: return (0.55, 0.36, 0.05)
        case .result: return (0.10, 0.38, 0.22)
        case .error: return (0.55, 0.10, 0.10)
        }
    }

    private func drawText(for flow: ExamFlow, _ cairo: OpaquePointer) {
        let light: RGB = (1, 1, 1)
        let dark: RGB = (0.1, 0.1, 0.12)
        switch flow.screen {
        case .start:
            centered("Carrel demo exam", y: 200, size: 64, bold: true, light, cairo)
            centered("\(flow.questions.count) questions. The machine is locked while you answer.",
                     y: 290, size: 30, bold: false, light, cairo)
            centered("Press B or click Begin to start.", y: 350, size: 30, bold: false, light, cairo)
        case .locking:
            centered("Locking…", y: 320, size: 64, bold: true, light, cairo)
            centered("Waiting for Carrel to lock this machine", y: 400, size: 30, bold: false, light, cairo)
        case .question(let index):
            let question = flow.questions[index]
            text("Question \(index + 1) of \(flow.questions.count)", x: 140, y: 70, size: 28, bold: false,
                 (0.35, 0.35, 0.4), cairo)
            text("Locked: only this exam is visible", x: 760, y: 70, size: 22, bold: false, (0.1, 0.45, 0.25), cairo)
            if flow.showsCalculator(on: index) {
                text("A calculator is beside the exam: Ctrl+Alt+Tab switches to it and back", x: 140, y: 112, size: 20,
                     bold: false, (0.35, 0.35, 0.4), cairo)
            }
            if let field = flow.answerFields[index] {
                paragraph(question.prompt, x: 140, y: 140, width: 1000, size: 36, bold: true, dark, cairo,
                          family: Self.answerFont)
                drawField(field, isLast: index + 1 == flow.questions.count, cairo)
            } else {
                paragraph(question.prompt, x: 140, y: 140, width: 1000, size: 40, bold: true, dark, cairo)
            }
        case .paused(let error):
            centered("Exam paused — content hidden", y: 220, size: 56, bold: true, light, cairo)
            centered(Self.explanation(for: error.code), y: 310, size: 30, bold: false, light, cairo)
            centered("Reason: \(error.code.protocolName)", y: 370, size: 26, bold: false, light, cairo)
            centered("Your answers are kept. End the exam to unlock the machine.", y: 450, size: 28, bold: false,
                     light, cairo)
        case .unlocking:
            centered("Handing in…", y: 320, size: 64, bold: true, light, cairo)
            centered("Waiting for Carrel to unlock this machine", y: 400, size: 30, bold: false, light, cairo)
        case .result(let score, let total):
            centered("Exam finished", y: 220, size: 64, bold: true, light, cairo)
            centered("Score: \(score) of \(total)", y: 340, size: 56, bold: true, light, cairo)
            centered("The machine is unlocked.", y: 430, size: 30, bold: false, light, cairo)
        case .error(let error):
            centered("The exam could not start", y: 180, size: 56, bold: true, light, cairo)
            centered(Self.explanation(for: error.code), y: 270, size: 30, bold: false, light, cairo)
            centered("Reason: \(error.code.protocolName)", y: 330, size: 26, bold: false, light, cairo)
            if !error.message.isEmpty {
                paragraph(error.message, x: 140, y: 390, width: 1000, size: 22, bold: false, light, cairo)
            }
        }
    }

    /// What a person reads for a reason code.
    static func explanation(for code: AssessmentError.Code) -> String {
        switch code {
        case .alreadyActive: return "Another exam session is already running."
        case .notEntitled: return "This app is not allowed to lock the machine."
        case .preconditionsUnmet: return "This machine does not meet the requirements for an exam."
        case .participantUnavailable: return "A tool this exam needs could not be started."
        case .unsupportedConfiguration: return "The exam asked for settings this machine cannot provide."
        case .surfaceNotReady: return "The exam window was not shown yet."
        case .timeout: return "The screen could not be locked in time."
        case .restrictionFailed: return "A restriction could not be applied."
        case .internal: return "Carrel met an internal error."
        case .interrupted: return "The session was interrupted."
        case .cancelled: return "Locking was cancelled."
        case .integrity: return "A restriction stopped holding."
        case .administrative: return "An invigilator paused the exam."
        case .timeLimit: return "Time is up."
        case .shutdown: return "The machine is shutting down."
        case .connection: return "The connection to Carrel was lost."
        case .notAvailable: return "This app is not running inside Carrel as its exam app."
        case .notActive: return "No session is active."
        case .multipleParticipantsNotSupported: return "This version of Carrel cannot start the tools this exam needs."
        case .configurationUpdatesNotSupported: return "The exam's settings cannot be changed during this session."
        case .other: return "Something went wrong."
        }
    }

    // MARK: Drawing

    /// The answer field: committed text, the preedit underlined after the
    /// cursor's text, a caret; scrolled so the caret stays in the box.
    private func drawField(_ field: AnswerField, isLast: Bool, _ cairo: OpaquePointer) {
        let frame = ExamLayout.answerField
        let size = 40.0
        text(isLast ? "Your answer — Enter hands in the exam" : "Your answer — Enter goes to the next question",
             x: frame.x, y: frame.y - 16, size: 22, bold: false, (0.35, 0.35, 0.4), cairo, family: Self.answerFont)
        cairo_rectangle(cairo, frame.x, frame.y, frame.width, frame.height)
        setColor(cairo, (1, 1, 1))
        cairo_fill_preserve(cairo)
        setColor(cairo, (0.12, 0.42, 0.80))
        cairo_set_line_width(cairo, 3)
        cairo_stroke(cairo)

        setFont(cairo, size: size, bold: false, family: Self.answerFont)
        let before = field.textBeforeCursor
        let preedit = field.preedit?.text ?? ""
        let preeditCaret = field.preedit?.cursor.map { String(decoding: preedit.utf8.prefix($0.lowerBound), as: UTF8.self) }
        let beforeWidth = advance(before, cairo)
        let preeditWidth = advance(preedit, cairo)
        let caretX = beforeWidth + (preeditCaret.map { advance($0, cairo) } ?? preeditWidth)
        let padding = 20.0
        let scroll = max(0, caretX - (frame.width - 2 * padding))
        let x = frame.x + padding - scroll
        let baseline = frame.y + frame.height / 2 + size * 0.35

        cairo_save(cairo)
        cairo_rectangle(cairo, frame.x + 2, frame.y + 2, frame.width - 4, frame.height - 4)
        cairo_clip(cairo)
        let ink: RGB = (0.1, 0.1, 0.12)
        text(before, x: x, y: baseline, size: size, bold: false, ink, cairo, family: Self.answerFont)
        if !preedit.isEmpty {
            let preeditInk: RGB = (0.12, 0.30, 0.65)
            text(preedit, x: x + beforeWidth, y: baseline, size: size, bold: false, preeditInk, cairo,
                 family: Self.answerFont)
            cairo_move_to(cairo, x + beforeWidth, baseline + 6)
            cairo_line_to(cairo, x + beforeWidth + preeditWidth, baseline + 6)
            cairo_set_line_width(cairo, 2)
            cairo_stroke(cairo)
        }
        text(field.textAfterCursor, x: x + beforeWidth + preeditWidth, y: baseline, size: size, bold: false, ink,
             cairo, family: Self.answerFont)
        let caretRect = ExamRect(x: x + caretX, y: baseline - size * 0.9, width: 2, height: size * 1.15)
        if field.preedit?.cursor != nil || field.preedit == nil {
            cairo_rectangle(cairo, caretRect.x, caretRect.y, caretRect.width, caretRect.height)
            setColor(cairo, ink)
            cairo_fill(cairo)
        }
        cairo_restore(cairo)
        caret = caretRect
    }

    private func advance(_ string: String, _ cairo: OpaquePointer) -> Double {
        var extents = cairo_text_extents_t()
        cairo_text_extents(cairo, string, &extents)
        return extents.x_advance
    }

    private func drawButton(_ button: ExamButton, _ cairo: OpaquePointer) {
        let frame = button.frame
        cairo_rectangle(cairo, frame.x, frame.y, frame.width, frame.height)
        setColor(cairo, button.isSelected ? (0.12, 0.42, 0.80) : (0.88, 0.89, 0.92))
        cairo_fill_preserve(cairo)
        setColor(cairo, (0.25, 0.27, 0.32))
        cairo_set_line_width(cairo, 2)
        cairo_stroke(cairo)
        let color: RGB = button.isSelected ? (1, 1, 1) : (0.1, 0.1, 0.12)
        setFont(cairo, size: 30, bold: button.isSelected)
        var extents = cairo_text_extents_t()
        cairo_text_extents(cairo, button.label, &extents)
        let x: Double
        if case .choose = button.action {
            x = frame.x + 24
        } else {
            x = frame.x + (frame.width - extents.x_advance) / 2
        }
        text(button.label, x: x, y: frame.y + frame.height / 2 + 11, size: 30, bold: button.isSelected, color, cairo)
    }

    private func setColor(_ cairo: OpaquePointer, _ color: RGB) {
        cairo_set_source_rgb(cairo, color.0, color.1, color.2)
    }

    private func setFont(_ cairo: OpaquePointer, size: Double, bold: Bool, family: String = ExamRenderer.font) {
        cairo_select_font_face(cairo, family, CAIRO_FONT_SLANT_NORMAL,
                               bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL)
        cairo_set_font_size(cairo, size)
    }

    private func text(_ string: String, x: Double, y: Double, size: Double, bold: Bool, _ color: RGB,
                      _ cairo: OpaquePointer, family: String = ExamRenderer.font) {
        setFont(cairo, size: size, bold: bold, family: family)
        setColor(cairo, color)
        cairo_move_to(cairo, x, y)
        cairo_show_text(cairo, string)
    }

    private func centered(_ string: String, y: Double, size: Double, bold: Bool, _ color: RGB,
                          _ cairo: OpaquePointer) {
        setFont(cairo, size: size, bold: bold)
        var extents = cairo_text_extents_t()
        cairo_text_extents(cairo, string, &extents)
        text(string, x: (ExamLayout.designWidth - extents.x_advance) / 2, y: y, size: size, bold: bold, color, cairo)
    }

    /// Draws `string` wrapped at word boundaries to `width`.
    private func paragraph(_ string: String, x: Double, y: Double, width: Double, size: Double, bold: Bool,
                           _ color: RGB, _ cairo: OpaquePointer, family: String = ExamRenderer.font) {
        setFont(cairo, size: size, bold: bold, family: family)
        var lines: [String] = []
        var line = ""
        for word in string.split(separator: " ") {
            let candidate = line.isEmpty ? String(word) : line + " " + word
            var extents = cairo_text_extents_t()
            cairo_text_extents(cairo, candidate, &extents)
            if extents.x_advance > width && !line.isEmpty {
                lines.append(line)
                line = String(word)
            } else {
                line = candidate
            }
        }
        if !line.isEmpty { lines.append(line) }
        for (number, text) in lines.prefix(6).enumerated() {
            self.text(text, x: x, y: y + Double(number) * size * 1.3, size: size, bold: bold, color, cairo,
                      family: family)
        }
    }
}
