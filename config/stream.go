package config

// checkStream checks a kind: stream keyspace's settings.
func (k *KeyspaceConfig) checkStream() error {
	return nil
}
