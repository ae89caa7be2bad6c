package boltjournal

// SpillDeleteEvery is spillDeleteEvery, for the tests.
const SpillDeleteEvery = spillDeleteEvery
