package cli

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/betaport/betaport/app/betaport"
)

// The channel and rollout commands work on local storage, as bundle
// rollback does: what they change is what the service serves at its next
// update check. Each prints the channel (or tester) as JSON on stdout, its
// testers counted as the API counts them, and says what happened on stderr.

// printChannel counts the channel's testers and prints it.
func printChannel(ctx context.Context, s betaport.Store, extensionID int64, c *betaport.Channel, stdout io.Writer) error {
	if err := betaport.CountChannel(ctx, s, extensionID, c); err != nil {
		return err
	}
	return printJSON(stdout, c)
}

func channelList(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := DefaultConfig()
	fs := flag.NewFlagSet("channel list", flag.ContinueOnError)
	id := fs.Int64("extension", 0, "the extension's `ID` (required)")
	c.storageFlags(fs)
	if err := parse(fs, args, stderr); err != nil {
		return err
	}
	if *id == 0 {
		return usageError{"--extension is required"}
	}
	return withExistingStorage(ctx, c, func(st *Storage) error {
		list, err := st.Store.FindChannels(ctx, *id)
		if err != nil {
			return err
		}
		for _, ch := range list {
			if err := betaport.CountChannel(ctx, st.Store, *id, ch); err != nil {
				return err
			}
		}
		return printJSON(stdout, list)
	})
}

func channelCreate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := DefaultConfig()
	fs := flag.NewFlagSet("channel create", flag.ContinueOnError)
	id := fs.Int64("extension", 0, "the extension's `ID` (required)")
	name := fs.String("name", "", "the channel's `NAME`: lower-case letters, digits and hyphens, e.g. internal (required)")
	c.storageFlags(fs)
	if err := parse(fs, args, stderr); err != nil {
		return err
	}
	if *id == 0 || *name == "" {
		return usageError{"--extension and --name are required"}
	}
	return withExistingStorage(ctx, c, func(st *Storage) error {
		ch, err := st.Store.CreateChannel(ctx, *id, *name, betaport.ActorCommandLine)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "Extension %d has channel %s. Move testers to it with `betaport channel move`, and put a bundle on it with `betaport bundle promote`.\n", *id, ch.Name)
		return printChannel(ctx, st.Store, *id, ch, stdout)
	})
}

func channelMove(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := DefaultConfig()
	fs := flag.NewFlagSet("channel move", flag.ContinueOnError)
	id := fs.Int64("extension", 0, "the extension's `ID` (required)")
	email := fs.String("tester", "", "the tester's e-mail `ADDRESS` (required)")
	to := fs.String("to", "", "the `NAME` of the channel the tester moves to (required)")
	c.storageFlags(fs)
	if err := parse(fs, args, stderr); err != nil {
		return err
	}
	if *id == 0 || *email == "" || *to == "" {
		return usageError{"--extension, --tester and --to are required"}
	}
	return withExistingStorage(ctx, c, func(st *Storage) error {
		if _, err := st.Store.FindExtension(ctx, *id); err != nil {
			return err
		}
		t, err := st.Store.FindTesterByEmail(ctx, *id, *email)
		if betaport.ErrorCode(err) == betaport.ENOTFOUND {
			return betaport.Errorf(betaport.ENOTFOUND, "Extension %d has no tester %s.", *id, *email)
		} else if err != nil {
			return err
		}
		from := t.Channel
		if t, err = st.Store.SetTesterChannel(ctx, t.ID, *to, betaport.ActorCommandLine); err != nil {
			return err
		}
		if from == t.Channel {
			fmt.Fprintf(stderr, "%s is on channel %s already: nothing changed.\n", t.Email, t.Channel)
		} else {
			fmt.Fprintf(stderr, "%s moves from channel %s to %s: their next update check gets %s's bundle.\n", t.Email, from, t.Channel, t.Channel)
		}
		return printJSON(stdout, t)
	})
}

// bundlePromote puts an already published bundle on a channel, everyone
// on it at once or, with --percent below 100, as a rollout.
func bundlePromote(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := DefaultConfig()
	fs := flag.NewFlagSet("bundle promote", flag.ContinueOnError)
	id := fs.Int64("extension", 0, "the extension's `ID` (required)")
	number := fs.Int64("bundle", 0, "the `NUMBER` of the published bundle to put on the channel (required)")
	channel := fs.String("channel", "", "the `NAME` of the channel that gets it (required)")
	percent := fs.Int("percent", 100, "the `PERCENT` of the channel's testers who get it: below 100 starts a rollout")
	c.storageFlags(fs)
	if err := parse(fs, args, stderr); err != nil {
		return err
	}
	if *id == 0 || *number == 0 || *channel == "" {
		return usageError{"--extension, --bundle and --channel are required"}
	}
	return promote(ctx, c, *id, *number, *channel, *percent, stdout, stderr)
}

// rolloutStart is bundle promote below 100 %.
func rolloutStart(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := DefaultConfig()
	fs := flag.NewFlagSet("rollout start", flag.ContinueOnError)
	id := fs.Int64("extension", 0, "the extension's `ID` (required)")
	channel := fs.String("channel", "", "the `NAME` of the channel to roll out on (required)")
	number := fs.Int64("bundle", 0, "the `NUMBER` of the published bundle to roll out (required)")
	percent := fs.Int("percent", 0, "the `PERCENT` of the channel's testers who get it first, 1 to 99 (required)")
	c.storageFlags(fs)
	if err := parse(fs, args, stderr); err != nil {
		return err
	}
	if *id == 0 || *channel == "" || *number == 0 || *percent == 0 {
		return usageError{"--extension, --channel, --bundle and --percent are required"}
	}
	if *percent == 100 {
		return usageError{fmt.Sprintf("--percent 100 is no rollout: to give bundle #%d to everyone on %s at once, run `betaport bundle promote --extension %d --bundle %d --channel %s`",
			*number, *channel, *id, *number, *channel)}
	}
	return promote(ctx, c, *id, *number, *channel, *percent, stdout, stderr)
}

func promote(ctx context.Context, c Config, id, number int64, channel string, percent int, stdout, stderr io.Writer) error {
	// Checked here: the store reads a placement's 0 as "everyone".
	if err := betaport.ValidateRolloutPercent(percent); err != nil {
		return err
	}
	return withExistingStorage(ctx, c, func(st *Storage) error {
		ch, err := st.Store.PromoteBundle(ctx, id, number, betaport.Placement{Channel: channel, Percent: percent, Actor: betaport.ActorCommandLine})
		if err != nil {
			return err
		}
		if err := betaport.CountChannel(ctx, st.Store, id, ch); err != nil {
			return err
		}
		if r := ch.Rollout; r != nil && r.Bundle == number {
			fmt.Fprintf(stderr, "Bundle #%d is rolling out on %s at %d %%: %d of its %d testers get it at their next update check, the others keep %s. "+
				"Widen it with `betaport rollout advance`, stop it with `betaport rollout halt`.\n",
				number, ch.Name, r.Percent, r.Reached, ch.Testers, bundleName(r.Previous))
		} else {
			fmt.Fprintf(stderr, "Bundle #%d is channel %s's current bundle: its %d testers get it at their next update check.\n", number, ch.Name, ch.Testers)
		}
		return printJSON(stdout, ch)
	})
}

// bundleName names a channel's bundle in a sentence.
func bundleName(number int64) string {
	if number == 0 {
		return "no bundle (the channel had none)"
	}
	return fmt.Sprintf("#%d", number)
}

// rolloutChange is the command that advances, halts, resumes or completes
// a channel's rollout in progress.
func rolloutChange(action string) command {
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		c := DefaultConfig()
		fs := flag.NewFlagSet("rollout "+action, flag.ContinueOnError)
		id := fs.Int64("extension", 0, "the extension's `ID` (required)")
		channel := fs.String("channel", "", "the `NAME` of the channel whose rollout it is (required)")
		var percent *int
		if action == betaport.RolloutAdvance {
			percent = fs.Int("percent", 0, "the `PERCENT` of the channel's testers who get it, no lower than now; 100 completes it (required)")
		}
		c.storageFlags(fs)
		if err := parse(fs, args, stderr); err != nil {
			return err
		}
		if *id == 0 || *channel == "" {
			return usageError{"--extension and --channel are required"}
		}
		p := 0
		if percent != nil {
			if *percent == 0 {
				return usageError{"--percent is required: the share of the channel's testers the rollout reaches next"}
			}
			p = *percent
		}
		return withExistingStorage(ctx, c, func(st *Storage) error {
			before, err := st.Store.FindChannel(ctx, *id, *channel)
			if err != nil {
				return err
			}
			ch, err := st.Store.ChangeRollout(ctx, *id, *channel, action, p, betaport.ActorCommandLine)
			if err != nil {
				return err
			}
			if err := betaport.CountChannel(ctx, st.Store, *id, ch); err != nil {
				return err
			}
			fmt.Fprintln(stderr, rolloutSentence(action, before, ch))
			return printJSON(stdout, ch)
		})
	}
}

// rolloutSentence says what a rollout change did, before and after.
func rolloutSentence(action string, before, after *betaport.Channel) string {
	r, was := after.Rollout, before.Rollout
	if r == nil { // completed, by complete or an advance to 100 %
		return fmt.Sprintf("The rollout is complete: bundle #%d is channel %s's current bundle, and all its %d testers get it at their next update check.",
			after.CurrentBundle, after.Name, after.Testers)
	}
	unchanged := was != nil && was.ID == r.ID && was.Percent == r.Percent && was.State == r.State
	switch action {
	case betaport.RolloutAdvance:
		if unchanged {
			return fmt.Sprintf("The rollout of bundle #%d on %s is at %d %% already: nothing changed.", r.Bundle, after.Name, r.Percent)
		}
		return fmt.Sprintf("The rollout of bundle #%d on %s is at %d %%: %d of its %d testers get it at their next update check, the others keep %s.",
			r.Bundle, after.Name, r.Percent, r.Reached, after.Testers, bundleName(r.Previous))
	case betaport.RolloutHalt:
		keep := "Testers who already have it keep it: browsers never go back a version."
		if unchanged {
			return fmt.Sprintf("The rollout of bundle #%d on %s is halted already: nothing changed. %s", r.Bundle, after.Name, keep)
		}
		return fmt.Sprintf("The rollout of bundle #%d on %s is halted at %d %%: no one new gets it. %s "+
			"The others keep %s. Resume it with `betaport rollout resume`, or serve an older build to everyone with `betaport bundle rollback --channel %s`.",
			r.Bundle, after.Name, r.Percent, keep, bundleName(r.Previous), after.Name)
	case betaport.RolloutResume:
		if unchanged {
			return fmt.Sprintf("The rollout of bundle #%d on %s is active already: nothing changed.", r.Bundle, after.Name)
		}
		return fmt.Sprintf("The rollout of bundle #%d on %s is active again at %d %%: %d of its %d testers get it at their next update check.",
			r.Bundle, after.Name, r.Percent, r.Reached, after.Testers)
	}
	return fmt.Sprintf("The rollout of bundle #%d on %s is %s at %d %%.", r.Bundle, after.Name, r.State, r.Percent)
}
