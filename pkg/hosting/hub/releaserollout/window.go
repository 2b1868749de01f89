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

// window: whether the maintenance window is closed at in.Now, the note
// saying until when, and when it opens or closes next (zero: no window).
// A window the hub cannot read makes the rollout invalid.
func window(in *Input) (closed bool, note string, change time.Time) {
	w := in.Spec.MaintenanceWindow
	if w == nil || in.Problem != "" {
		return false, "", time.Time{}
	}
	open, change, problem := WindowAt(w, in.Now)
	if problem != "" {
		in.Problem = problem
		return false, "", time.Time{}
	}
	if open {
		return false, "", change
	}
	return true, "waits for the maintenance window, which opens at " + change.UTC().Format(time.RFC3339), change
}
