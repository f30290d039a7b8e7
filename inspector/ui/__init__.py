"""The PySide6 + qasync inspector window. Binds to the session layer; owns no protocol logic."""
