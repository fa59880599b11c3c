package http

import (
	"context"
	"net/http"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
)

// Channels and staged rollouts: admins make channels, move testers between
// them, promote bundles and advance, halt, resume or complete rollouts.
// What a tester gets follows their channel (testerChannel).

// handleListChannels answers an extension's channels, each with its
// testers and its rollout's reach.
func (s *Server) handleListChannels(w http.ResponseWriter, r *http.Request, _ *subject, ext *betaport.Extension) {
	s.writeChecks(r.Context()) // the counts are as new as the testers list's
	list, err := s.Store.FindChannels(r.Context(), ext.ID)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	for _, c := range list {
		if err := betaport.CountChannel(r.Context(), s.Store, ext.ID, c); err != nil {
			s.Error(w, r, err)
			return
		}
	}
	writeJSON(w, r, http.StatusOK, api.Channels{Items: list})
}

// handleGetChannel answers one channel.
func (s *Server) handleGetChannel(w http.ResponseWriter, r *http.Request, _ *subject, ext *betaport.Extension) {
	s.writeChannel(w, r, ext, http.StatusOK, r.PathValue("channel"))
}

func (s *Server) writeChannel(w http.ResponseWriter, r *http.Request, ext *betaport.Extension, status int, name string) {
	s.writeChecks(r.Context())
	c, err := s.Store.FindChannel(r.Context(), ext.ID, name)
	if err == nil {
		err = betaport.CountChannel(r.Context(), s.Store, ext.ID, c)
	}
	if err != nil {
		s.Error(w, r, err)
		return
	}
	writeJSON(w, r, status, c)
}

// handleCreateChannel makes a channel (201).
func (s *Server) handleCreateChannel(w http.ResponseWriter, r *http.Request, who *subject, ext *betaport.Extension) {
	var in api.NewChannel
	if !s.readJSON(w, r, &in) {
		return
	}
	c, err := s.Store.CreateChannel(r.Context(), ext.ID, in.Name, who.actor())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	w.Header().Set("Location", api.ChannelPath(ext.ID, c.Name))
	writeJSON(w, r, http.StatusCreated, c)
}

// handlePromote puts a published bundle on a channel, at once or as a
// rollout, and answers the channel.
func (s *Server) handlePromote(w http.ResponseWriter, r *http.Request, who *subject, ext *betaport.Extension) {
	n, ok := pathID(w, r, "number")
	if !ok {
		return
	}
	var in api.Promotion
	if !s.readJSON(w, r, &in) {
		return
	}
	if in.Channel == "" {
		badParam(w, "channel", `Name the channel to promote the bundle to, like {"channel": "beta"}.`)
		return
	}
	c, err := s.Store.PromoteBundle(r.Context(), ext.ID, n,
		betaport.Placement{Channel: in.Channel, Percent: in.Percent, Actor: who.actor()})
	if err != nil {
		s.Error(w, r, err)
		return
	}
	s.Publish.WarmChannel(ext, c)
	s.writeChannel(w, r, ext, http.StatusOK, c.Name)
}

// handleChangeRollout advances, halts, resumes or completes a channel's
// rollout.
func (s *Server) handleChangeRollout(w http.ResponseWriter, r *http.Request, who *subject, ext *betaport.Extension) {
	action := r.PathValue("action")
	switch action {
	case betaport.RolloutAdvance, betaport.RolloutHalt, betaport.RolloutResume, betaport.RolloutComplete:
	default:
		s.Error(w, r, betaport.Errorf(betaport.ENOTFOUND, "A rollout is advanced, halted, resumed or completed."))
		return
	}
	var in api.RolloutChange
	if action == betaport.RolloutAdvance {
		if !s.readJSON(w, r, &in) {
			return
		}
		if in.Percent == 0 {
			badParam(w, "percent", `Say the percentage to advance the rollout to, like {"percent": 25}; 100 completes it.`)
			return
		}
	}
	c, err := s.Store.ChangeRollout(r.Context(), ext.ID, r.PathValue("channel"), action, in.Percent, who.actor())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	s.Publish.WarmChannel(ext, c)
	s.writeChannel(w, r, ext, http.StatusOK, c.Name)
}

// handleSetTesterChannel moves a tester to another channel.
func (s *Server) handleSetTesterChannel(w http.ResponseWriter, r *http.Request, who *subject, ext *betaport.Extension) {
	t, ok := s.testerOf(w, r, ext)
	if !ok {
		return
	}
	var in api.ChannelChoice
	if !s.readJSON(w, r, &in) {
		return
	}
	t, err := s.Store.SetTesterChannel(r.Context(), t.ID, in.Channel, who.actor())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, t)
}

// testerChannel is the channel whose bundles tester t gets.
func (s *Server) testerChannel(ctx context.Context, t *betaport.Tester) (*betaport.Channel, error) {
	return s.Store.FindChannel(ctx, t.ExtensionID, t.Channel)
}

// testerBundle is the number of the bundle tester t gets (0: none yet),
// and their channel: the channel's bundle for them, or, while its rollout
// is halted, the rollout's bundle when their copy already runs it (a
// halted rollout keeps what it gave: their builds page goes on saying so).
func (s *Server) testerBundle(ctx context.Context, t *betaport.Tester) (int64, *betaport.Channel, error) {
	c, err := s.testerChannel(ctx, t)
	if err != nil {
		return 0, nil, err
	}
	number := c.BundleFor(t.ID)
	if r := c.Rollout; r != nil && r.State == betaport.RolloutHalted && t.InstalledVersion != "" {
		b, err := s.Store.FindBundle(ctx, t.ExtensionID, r.Bundle)
		if err != nil {
			return 0, nil, err
		}
		if b.Version == t.InstalledVersion {
			number = r.Bundle
		}
	}
	return number, c, nil
}

// mayDownload reports whether the person may have bundle b: an admin any
// bundle, a tester those ever put on their channel (ENOTFOUND otherwise,
// as for a bundle that does not exist).
func (s *Server) mayDownload(ctx context.Context, who *subject, b *betaport.Bundle) error {
	if who.tester == nil {
		return nil
	}
	on, err := s.Store.OnChannel(ctx, b.ExtensionID, who.tester.Channel, b.Number)
	if err != nil {
		return err
	}
	if !on {
		return betaport.Errorf(betaport.ENOTFOUND, "Bundle %d of extension %d does not exist.", b.Number, b.ExtensionID)
	}
	return nil
}
