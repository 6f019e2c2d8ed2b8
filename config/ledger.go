package config

// checkLedger checks a kind: ledger keyspace's settings.
func (k *KeyspaceConfig) checkLedger() error {
	return nil
}
