package releaserollout

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
)

var weekdays = map[v1alpha1.Weekday]time.Weekday{
	"Sunday": time.Sunday, "Monday": time.Monday, "Tuesday": time.Tuesday, "Wednesday": time.Wednesday,
	"Thursday": time.Thursday, "Friday": time.Friday, "Saturday": time.Saturday,
}

// WindowAt says whether w is open at now and when that changes next: when
// it closes (open) or opens (closed). A problem is a window the hub cannot
// read (an unknown time zone, a malformed start, no day): it never opens.
// Windows are laid out in w's time zone, day by day, so a daylight-saving
// change moves them with the wall clock, as a person reading the schedule
// expects.
func WindowAt(w *v1alpha1.MaintenanceWindow, now time.Time) (open bool, change time.Time, problem string) {
	tz := w.TimeZone
	if tz == "" {
		tz = "UTC"
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return false, time.Time{}, fmt.Sprintf("spec.maintenanceWindow.timeZone: unknown time zone %q", tz)
	}
	hh, mm, ok := parseStart(w.Start)
	if !ok || w.DurationMinutes < 1 || len(w.Days) == 0 {
		return false, time.Time{}, "spec.maintenanceWindow never opens: it needs a day, a start HH:MM and a duration of at least one minute"
	}
	days := map[time.Weekday]bool{}
	for _, d := range w.Days {
		if wd, ok := weekdays[d]; ok {
			days[wd] = true
		}
	}
	if len(days) == 0 {
		return false, time.Time{}, "spec.maintenanceWindow.days names no day of the week"
	}
	duration := time.Duration(w.DurationMinutes) * time.Minute
	local := now.In(loc)
	var next time.Time
	// A window of up to a week may have opened up to 7 days ago.
	for offset := -7; offset <= 7; offset++ {
		day := time.Date(local.Year(), local.Month(), local.Day()+offset, hh, mm, 0, 0, loc)
		if !days[day.Weekday()] {
			continue
		}
		end := day.Add(duration)
		switch {
		case !now.Before(day) && now.Before(end):
			// Open: it closes at the end of this window, or later where the
			// next one starts before this one ends.
			if !open || end.After(change) {
				open, change = true, end
			}
		case day.After(now) && (next.IsZero() || day.Before(next)):
			next = day
		}
	}
	if open {
		return true, change, ""
	}
	return false, next, ""
}

func parseStart(s string) (hh, mm int, ok bool) {
	h, m, found := strings.Cut(s, ":")
	if !found {
		return 0, 0, false
	}
	hh, errH := strconv.Atoi(h)
	mm, errM := strconv.Atoi(m)
	return hh, mm, errH == nil && errM == nil && hh >= 0 && hh < 24 && mm >= 0 && mm < 60
}

// windows are the rollout's maintenance windows at in.Now.
type windows struct {
	// per: one entry for spec.maintenanceWindow (it applies to every hosted
	// cluster), or one per spec.maintenanceWindows; none: no window.
	per    []windowState
	shared bool
}

type windowState struct {
	open bool
	// change is when it closes (open) or opens next.
	change time.Time
}

// windowsAt evaluates the rollout's windows at in.Now. A window the hub
// cannot read makes the rollout invalid.
func windowsAt(in *Input) windows {
	var ws windows
	if in.Problem != "" {
		return ws
	}
	list := in.Spec.MaintenanceWindows
	if w := in.Spec.MaintenanceWindow; w != nil {
		list, ws.shared = []v1alpha1.SelectedMaintenanceWindow{{MaintenanceWindow: *w}}, true
	}
	for i := range list {
		open, change, problem := WindowAt(&list[i].MaintenanceWindow, in.Now)
		if problem != "" {
			if !ws.shared {
				problem = strings.Replace(problem, "spec.maintenanceWindow", fmt.Sprintf("spec.maintenanceWindows[%d]", i), 1)
			}
			in.Problem = problem
			return windows{}
		}
		ws.per = append(ws.per, windowState{open: open, change: change})
	}
	return ws
}

// none: the rollout has no maintenance window.
func (ws windows) none() bool { return len(ws.per) == 0 }

// applies are the windows that apply to h: the shared one, or the entries of
// spec.maintenanceWindows that select it.
func (ws windows) applies(h *HostedCluster) []windowState {
	if ws.shared {
		return ws.per
	}
	var out []windowState
	for _, i := range h.Windows {
		if i >= 0 && i < len(ws.per) {
			out = append(out, ws.per[i])
		}
	}
	return out
}

// held: h may not be moved now, because no window that applies to it is
// open; opens is when the first of them opens.
func (ws windows) held(h *HostedCluster) (held bool, opens time.Time) {
	if ws.none() {
		return false, time.Time{}
	}
	for _, w := range ws.applies(h) {
		if w.open {
			return false, time.Time{}
		}
		if opens.IsZero() || w.change.Before(opens) {
			opens = w.change
		}
	}
	return true, opens
}

// next is the first time after now a window opens or closes (zero: none).
func (ws windows) next(now time.Time) time.Time {
	var next time.Time
	for _, w := range ws.per {
		if w.change.After(now) && (next.IsZero() || w.change.Before(next)) {
			next = w.change
		}
	}
	return next
}

// windowNote is the Progressing note while windows hold hosted clusters
// ("" none): the shared window when it is closed, or the first opening of
// the windows of the hosted clusters held.
func windowNote(ws windows, held int, opens time.Time) string {
	switch {
	case ws.shared && !ws.per[0].open:
		return "waits for the maintenance window, which opens at " + ws.per[0].change.UTC().Format(time.RFC3339)
	case ws.shared || held == 0:
		return ""
	}
	return fmt.Sprintf("waits for the maintenance windows of %d hosted clusters, the first opening at %s", held, opens.UTC().Format(time.RFC3339))
}
