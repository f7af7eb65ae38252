# Builds an ASP.NET Core (or console) application with the .NET SDK and runs it on the ASP.NET runtime.
# Adapt: the .NET version, the project file (MyApp.csproj), the assembly name (MyApp.dll), the port.
# For a console application use the mcr.microsoft.com/dotnet/runtime image instead of aspnet.

FROM mcr.microsoft.com/dotnet/sdk:8.0.404-bookworm-slim AS build
WORKDIR /src
# Restore first so the NuGet packages stay cached while only the sources change.
COPY *.csproj ./
RUN dotnet restore
COPY . .
RUN dotnet publish -c Release -o /out --no-restore

FROM mcr.microsoft.com/dotnet/aspnet:8.0.11-bookworm-slim
WORKDIR /app
COPY --from=build /out ./
# .NET 8 images listen on 8080 and include the unprivileged "app" user.
ENV ASPNETCORE_HTTP_PORTS=8080
USER app
EXPOSE 8080
ENTRYPOINT ["dotnet", "MyApp.dll"]
