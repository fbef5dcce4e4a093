"""perfatlas: characterize parallel machines and profile parallel programs."""

__version__ = "0.1.0"
