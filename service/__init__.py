"""HTTP front end: routes, schemas, settings wiring and error mapping. No compute happens here."""
