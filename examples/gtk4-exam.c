/*
 * A small exam in GTK 4 and C that locks the machine with libcarrel-assessment.
 * It begins a session on its own window once the window is drawn, shows its
 * question only while the session holds, hides it at once when the session
 * is interrupted and ends the session, and quits when the session is over.
 *
 * Build it as a vendor would, from the installed pkg-config files alone:
 *   cc -o gtk4-exam gtk4-exam.c $(pkg-config --cflags --libs carrel-assessment-client gtk4)
 * Run it inside Carrel:  carrel -- env GDK_BACKEND=wayland ./gtk4-exam --hold 30
 *
 * Each event is printed as "gtk4-exam: event NAME [REASON MESSAGE]".
 * --hold SECONDS  end the session by itself after that long (0: only when interrupted)
 * --allow FEATURE allow a feature (spell_check, input_method, ...), repeatable
 * --time-limit S  ask for a session of at most S seconds (default: the policy's)
 * Exit status: 0 after ended, 2 when the session failed to begin, 1 otherwise.
 */
#include <carrel/assessment-gtk.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct exam {
	GtkApplication *app;
	GtkWindow *window;
	GtkLabel *status;
	GtkWidget *question;
	struct carrel_assessment *lockdown;
	struct carrel_assessment_session *session;
	struct carrel_assessment_configuration *configuration;
	guint hold_seconds;
	int exit_status;
};

static void say(const char *what, const struct carrel_assessment_event *event)
{
	if (event && event->error != CARREL_ASSESSMENT_OK)
		printf("gtk4-exam: %s %s %s\n", what, carrel_assessment_error_name(event->error), event->message);
	else
		printf("gtk4-exam: %s\n", what);
	fflush(stdout);
}

static gboolean end_session(gpointer data)
{
	struct exam *exam = data;
	enum carrel_assessment_error error = carrel_assessment_session_end(exam->session);
	if (error != CARREL_ASSESSMENT_OK)
		fprintf(stderr, "gtk4-exam: end refused: %s\n", carrel_assessment_error_describe(error));
	return G_SOURCE_REMOVE;
}

static void on_event(void *data, struct carrel_assessment_session *session, const struct carrel_assessment_event *event)
{
	(void)session;
	struct exam *exam = data;
	switch (event->kind) {
	case CARREL_ASSESSMENT_EVENT_BEGAN:
		say("event began", event);
		gtk_label_set_text(exam->status, "The exam is locked. Answer the question.");
		gtk_widget_set_visible(exam->question, TRUE);
		if (exam->hold_seconds > 0)
			g_timeout_add_seconds(exam->hold_seconds, end_session, exam);
		break;
	case CARREL_ASSESSMENT_EVENT_INTERRUPTED:
		/* Hide the questions first: the session is no longer whole. */
		gtk_widget_set_visible(exam->question, FALSE);
		gtk_label_set_text(exam->status, "Exam paused — content hidden.");
		say("event interrupted", event);
		say("content hidden", NULL);
		end_session(exam);
		break;
	case CARREL_ASSESSMENT_EVENT_FAILED:
		say("event failed", event);
		exam->exit_status = 2;
		g_application_quit(G_APPLICATION(exam->app));
		break;
	case CARREL_ASSESSMENT_EVENT_ENDED:
		gtk_widget_set_visible(exam->question, FALSE);
		say("event ended", event);
		exam->exit_status = 0;
		g_application_quit(G_APPLICATION(exam->app));
		break;
	default:
		say("event other", event);
		break;
	}
}

/* The lockdown and the session come from the window (carrel/assessment-gtk.h);
 * the session begins once the window's first frame is committed. */
static void lock(struct exam *exam)
{
	enum carrel_assessment_error error;
	exam->lockdown = carrel_assessment_gtk_create(exam->window, &error);
	if (!exam->lockdown) {
		fprintf(stderr, "gtk4-exam: cannot lock: %s\n", carrel_assessment_error_describe(error));
		g_application_quit(G_APPLICATION(exam->app));
		return;
	}
	exam->session = carrel_assessment_gtk_session_create(exam->lockdown, exam->window, exam->configuration,
	                                                     on_event, exam);
	if (!exam->session) {
		fprintf(stderr, "gtk4-exam: cannot make a session for the window\n");
		g_application_quit(G_APPLICATION(exam->app));
		return;
	}
	carrel_assessment_gtk_begin_when_drawn(exam->window, exam->session);
	say("locking", NULL);
}

static void on_activate(GtkApplication *app, gpointer data)
{
	struct exam *exam = data;
	exam->window = GTK_WINDOW(gtk_application_window_new(app));
	gtk_window_set_title(exam->window, "Exam (GTK 4, C)");
	GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 12);
	exam->status = GTK_LABEL(gtk_label_new("Locking the machine for the exam…"));
	exam->question = gtk_label_new("Question 1: what is 6 × 7?");
	gtk_widget_set_visible(exam->question, FALSE);
	gtk_box_append(GTK_BOX(box), GTK_WIDGET(exam->status));
	gtk_box_append(GTK_BOX(box), exam->question);
	gtk_window_set_child(exam->window, box);
	gtk_window_present(exam->window);
	lock(exam);
}

static int parse_arguments(struct exam *exam, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--hold") == 0 && i + 1 < argc) {
			exam->hold_seconds = (guint)strtoul(argv[++i], NULL, 10);
		} else if (strcmp(argv[i], "--time-limit") == 0 && i + 1 < argc) {
			carrel_assessment_configuration_set_time_limit(exam->configuration,
			                                               (uint32_t)strtoul(argv[++i], NULL, 10));
		} else if (strcmp(argv[i], "--allow") == 0 && i + 1 < argc) {
			const char *name = argv[++i];
			int feature = 0;
			while (feature < CARREL_ASSESSMENT_FEATURE_COUNT &&
			       strcmp(carrel_assessment_feature_name((enum carrel_assessment_feature)feature), name) != 0)
				feature++;
			if (carrel_assessment_configuration_allow_feature(exam->configuration,
			                                                  (enum carrel_assessment_feature)feature,
			                                                  true) != CARREL_ASSESSMENT_OK) {
				fprintf(stderr, "gtk4-exam: unknown feature '%s'; expected a name such as spell_check\n", name);
				return -1;
			}
		} else {
			fprintf(stderr, "usage: gtk4-exam [--hold SECONDS] [--time-limit SECONDS] [--allow FEATURE]...\n");
			return -1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct exam exam = {.exit_status = 1, .configuration = carrel_assessment_configuration_create()};
	if (!exam.configuration || parse_arguments(&exam, argc, argv) < 0)
		return 64;
	exam.app = gtk_application_new(NULL, G_APPLICATION_NON_UNIQUE);
	g_signal_connect(exam.app, "activate", G_CALLBACK(on_activate), &exam);
	/* Our arguments are parsed already; GTK gets none. */
	g_application_run(G_APPLICATION(exam.app), 1, argv);
	/* Release the session and the lockdown before the connection closes. */
	carrel_assessment_session_destroy(exam.session);
	carrel_assessment_destroy(exam.lockdown);
	carrel_assessment_configuration_destroy(exam.configuration);
	g_object_unref(exam.app);
	return exam.exit_status;
}
