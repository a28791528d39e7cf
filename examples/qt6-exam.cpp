/*
 * A small exam in Qt 6 and C++ that locks the machine with libcarrel-assessment.
 * It begins a session on its own window once the window is drawn, shows its
 * question only while the session holds, hides it at once when the session
 * is interrupted and ends the session, and quits when the session is over.
 *
 * Build it as a vendor would, from the installed pkg-config files alone (the
 * last -I is Qt's platform headers, from Debian's qt6-base-private-dev):
 *   c++ -std=c++17 -fPIC -o qt6-exam qt6-exam.cpp \
 *       $(pkg-config --cflags --libs carrel-assessment-client Qt6Widgets) \
 *       -I"$(pkg-config --variable=includedir Qt6Gui)/QtGui/$(pkg-config --modversion Qt6Gui)/QtGui"
 * Run it inside Carrel:  carrel -- env QT_QPA_PLATFORM=wayland ./qt6-exam --hold 30
 *
 * Each event is printed as "qt6-exam: event NAME [REASON MESSAGE]".
 * --hold SECONDS  end the session by itself after that long (0: only when interrupted)
 * --allow FEATURE allow a feature (spell_check, input_method, ...), repeatable
 * Exit status: 0 after ended, 2 when the session failed to begin, 1 otherwise.
 */
#include <carrel/assessment-qt.h>

#include <QtCore/QTimer>
#include <QtWidgets/QApplication>
#include <QtWidgets/QLabel>
#include <QtWidgets/QVBoxLayout>
#include <QtWidgets/QWidget>

#include <cstdio>
#include <cstdlib>
#include <cstring>

// Qt commits a frame after the paint event that drew it; a begin that still
// finds the window unmapped is retried this often, this many times.
static const int RETRY_MS = 100, RETRIES = 30;
// Seen with Qt 6.4 (bookworm) from PyQt6: quitting within milliseconds of
// the session's end, while the compositor's post-end events arrive,
// sometimes hangs Qt's exit in its Wayland reader thread; a moment later never did.
static const int QUIT_DELAY_MS = 500;

static void say(const char *what, const struct carrel_assessment_event *event = nullptr)
{
	if (event && event->error != CARREL_ASSESSMENT_OK)
		std::printf("qt6-exam: %s %s %s\n", what, carrel_assessment_error_name(event->error), event->message);
	else
		std::printf("qt6-exam: %s\n", what);
	std::fflush(stdout);
}

class ExamWindow : public QWidget {
public:
	ExamWindow(struct carrel_assessment_configuration *configuration, int hold_seconds)
		: configuration(configuration), hold_seconds(hold_seconds)
	{
		setWindowTitle("Exam (Qt 6, C++)");
		auto *layout = new QVBoxLayout(this);
		status = new QLabel(QString::fromUtf8("Locking the machine for the exam…"));
		question = new QLabel(QString::fromUtf8("Question 1: what is 6 × 7?"));
		question->hide();
		layout->addWidget(status);
		layout->addWidget(question);
	}

	~ExamWindow() override { release(); }

	/* Before the connection closes with the application. */
	void release()
	{
		carrel_assessment_session_destroy(session);
		session = nullptr;
		carrel_assessment_destroy(lockdown);
		lockdown = nullptr;
	}

	int exit_status = 1;

protected:
	void paintEvent(QPaintEvent *event) override
	{
		QWidget::paintEvent(event);
		if (!painted) {
			painted = true;
			// After this paint event Qt flushes and commits the frame.
			QTimer::singleShot(0, this, [this] { lock(); });
		}
	}

private:
	void lock()
	{
		enum carrel_assessment_error error = CARREL_ASSESSMENT_OK;
		if (!lockdown)
			lockdown = carrel_assessment_qt_create(&error);
		if (!lockdown) {
			std::fprintf(stderr, "qt6-exam: cannot lock: %s\n", carrel_assessment_error_describe(error));
			quit(2);
			return;
		}
		carrel_assessment_session_destroy(session);  // a failed one, when retrying
		session = carrel_assessment_qt_session_create(lockdown, windowHandle(), configuration, on_event, this);
		if (!session) {
			std::fprintf(stderr, "qt6-exam: cannot make a session for the window (is it shown on Wayland?)\n");
			quit(2);
			return;
		}
		error = carrel_assessment_session_begin(session);
		if (error != CARREL_ASSESSMENT_OK) {
			std::fprintf(stderr, "qt6-exam: begin refused: %s\n", carrel_assessment_error_describe(error));
			quit(2);
			return;
		}
		if (retries == RETRIES)
			say("locking");
	}

	static void on_event(void *data, struct carrel_assessment_session *, const struct carrel_assessment_event *event)
	{
		static_cast<ExamWindow *>(data)->handle(event);
	}

	void handle(const struct carrel_assessment_event *event)
	{
		switch (event->kind) {
		case CARREL_ASSESSMENT_EVENT_BEGAN:
			say("event began");
			status->setText("The exam is locked. Answer the question.");
			question->show();
			if (hold_seconds > 0)
				QTimer::singleShot(hold_seconds * 1000, this, [this] { end(); });
			break;
		case CARREL_ASSESSMENT_EVENT_INTERRUPTED:
			// Hide the questions first: the session is no longer whole.
			question->hide();
			status->setText(QString::fromUtf8("Exam paused — content hidden."));
			say("event interrupted", event);
			say("content hidden");
			end();
			break;
		case CARREL_ASSESSMENT_EVENT_FAILED:
			if (event->error == CARREL_ASSESSMENT_ERROR_SURFACE_NOT_READY && retries > 0) {
				// The frame was not committed yet: nothing is restricted, try a new
				// session (not from inside this one's callback).
				retries--;
				QTimer::singleShot(RETRY_MS, this, [this] { lock(); });
				return;
			}
			say("event failed", event);
			quit(2);
			break;
		case CARREL_ASSESSMENT_EVENT_ENDED:
			question->hide();
			say("event ended");
			quit(0);
			break;
		default:
			say("event other", event);
			break;
		}
	}

	void end()
	{
		enum carrel_assessment_error error = carrel_assessment_session_end(session);
		if (error != CARREL_ASSESSMENT_OK)
			std::fprintf(stderr, "qt6-exam: end refused: %s\n", carrel_assessment_error_describe(error));
	}

	void quit(int status_code)
	{
		exit_status = status_code;
		QTimer::singleShot(QUIT_DELAY_MS, qApp, &QCoreApplication::quit);
	}

	struct carrel_assessment_configuration *configuration;
	int hold_seconds;
	struct carrel_assessment *lockdown = nullptr;
	struct carrel_assessment_session *session = nullptr;
	QLabel *status;
	QLabel *question;
	bool painted = false;
	int retries = RETRIES;
};

static int parse_arguments(struct carrel_assessment_configuration *configuration, int *hold, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (std::strcmp(argv[i], "--hold") == 0 && i + 1 < argc) {
			*hold = std::atoi(argv[++i]);
		} else if (std::strcmp(argv[i], "--allow") == 0 && i + 1 < argc) {
			const char *name = argv[++i];
			int feature = 0;
			while (feature < CARREL_ASSESSMENT_FEATURE_COUNT &&
			       std::strcmp(carrel_assessment_feature_name(static_cast<enum carrel_assessment_feature>(feature)),
			                   name) != 0)
				feature++;
			if (carrel_assessment_configuration_allow_feature(
				    configuration, static_cast<enum carrel_assessment_feature>(feature), true) !=
			    CARREL_ASSESSMENT_OK) {
				std::fprintf(stderr, "qt6-exam: unknown feature '%s'; expected a name such as spell_check\n", name);
				return -1;
			}
		} else {
			std::fprintf(stderr, "usage: qt6-exam [--hold SECONDS] [--allow FEATURE]...\n");
			return -1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct carrel_assessment_configuration *configuration = carrel_assessment_configuration_create();
	int hold = 0;
	if (!configuration || parse_arguments(configuration, &hold, argc, argv) < 0)
		return 64;
	// Our arguments are parsed already; Qt gets none.
	int qt_argc = 1;
	QApplication app(qt_argc, argv);
	int status;
	{
		ExamWindow window(configuration, hold);
		window.show();
		app.exec();
		status = window.exit_status;
		window.release();
	}
	carrel_assessment_configuration_destroy(configuration);
	return status;
}
